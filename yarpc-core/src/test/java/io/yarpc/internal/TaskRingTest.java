package io.yarpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class TaskRingTest {
  /** {@code n} distinct tasks (a non-capturing lambda would be one shared instance). */
  private static Runnable[] tasks(int n) {
    Runnable[] out = new Runnable[n];
    for (int i = 0; i < n; i++) {
      int id = i;
      out[i] =
          new Runnable() {
            @Override
            public void run() {}

            @Override
            public String toString() {
              return "task " + id;
            }
          };
    }
    return out;
  }

  @Test
  void tasksComeOutOldestFirstWithTheirTimesAcrossWrapsAndGrowth() {
    TaskRing ring = new TaskRing();
    Runnable[] t = tasks(100);
    // wrap the ring first: 10 in, 10 out, so head sits mid-array when it grows
    for (int i = 0; i < 10; i++) {
      ring.add(t[i], i);
    }
    for (int i = 0; i < 10; i++) {
      assertThat(ring.poll()).isSameAs(t[i]);
    }
    for (int i = 10; i < 100; i++) {
      ring.add(t[i], 1_000 + i);
    }
    assertThat(ring.size()).isEqualTo(90);
    assertThat(ring.capacity()).isEqualTo(128);
    for (int i = 0; i < 90; i++) {
      assertThat(ring.queuedAt(i)).isEqualTo(1_010 + i);
    }
    for (int i = 10; i < 100; i++) {
      assertThat(ring.poll()).isSameAs(t[i]);
    }
    assertThat(ring.poll()).isNull();
    assertThat(ring.isEmpty()).isTrue();
  }

  @Test
  void removeTakesOneTaskOutAndKeepsTheOrderAndTimesOfTheRest() {
    TaskRing ring = new TaskRing();
    Runnable[] t = tasks(20);
    for (int i = 0; i < 12; i++) {
      ring.add(t[i], i);
      ring.poll(); // move head forward so the ring wraps below
    }
    for (int i = 0; i < 10; i++) {
      ring.add(t[i], 100 + i);
    }
    assertThat(ring.remove(t[4])).isTrue();
    assertThat(ring.remove(t[4])).isFalse();
    assertThat(ring.remove(t[15])).isFalse();
    assertThat(ring.size()).isEqualTo(9);
    assertThat(ring.toArray())
        .containsExactly(t[0], t[1], t[2], t[3], t[5], t[6], t[7], t[8], t[9]);
    assertThat(ring.queuedAt(3)).isEqualTo(103);
    assertThat(ring.queuedAt(4)).isEqualTo(105);
    assertThat(ring.queuedAt(8)).isEqualTo(109);
    assertThatThrownBy(() -> ring.queuedAt(9)).isInstanceOf(IndexOutOfBoundsException.class);
  }

  @Test
  void drainReturnsEverythingOldestFirst() {
    TaskRing ring = new TaskRing();
    Runnable[] t = tasks(40);
    for (Runnable r : t) {
      ring.add(r, 0);
    }
    assertThat(ring.drain()).containsExactly(t);
    assertThat(ring.isEmpty()).isTrue();
  }

  @Test
  void aRingThatGrewLargeIsGivenUpWhenItEmpties() {
    TaskRing ring = new TaskRing();
    Runnable[] t = tasks(TaskRing.SHRINK_ABOVE + 1);
    for (Runnable r : t) {
      ring.add(r, 0);
    }
    assertThat(ring.capacity()).isGreaterThan(TaskRing.SHRINK_ABOVE);
    while (ring.poll() != null) {}
    assertThat(ring.capacity()).isEqualTo(TaskRing.INITIAL);
    // a small one keeps its arrays (no churn for a pool that is often empty)
    for (int i = 0; i < 20; i++) {
      ring.add(t[i], 0);
    }
    while (ring.poll() != null) {}
    assertThat(ring.capacity()).isEqualTo(32);
  }

  @Test
  void behavesAsAQueueUnderRandomOperations() {
    Random random = new Random(42);
    TaskRing ring = new TaskRing();
    ArrayDeque<Runnable> model = new ArrayDeque<>();
    List<Long> modelTimes = new ArrayList<>();
    Runnable[] t = tasks(3_000);
    long time = 0;
    for (int step = 0; step < 20_000; step++) {
      int op = random.nextInt(10);
      if (op < 5) {
        Runnable r = t[random.nextInt(t.length)];
        ring.add(r, ++time);
        model.addLast(r);
        modelTimes.add(time);
      } else if (op < 9) {
        Runnable expected = model.pollFirst();
        assertThat(ring.poll()).isSameAs(expected);
        if (expected != null) {
          modelTimes.remove(0);
        }
      } else if (!model.isEmpty()) {
        Runnable r = new ArrayList<>(model).get(random.nextInt(model.size()));
        int at = new ArrayList<>(model).indexOf(r);
        assertThat(ring.remove(r)).isTrue();
        model.removeFirstOccurrence(r);
        modelTimes.remove(at);
      }
      assertThat(ring.size()).isEqualTo(model.size());
      if (!model.isEmpty()) {
        assertThat(ring.queuedAt(0)).isEqualTo(modelTimes.get(0));
        assertThat(ring.queuedAt(model.size() - 1))
            .isEqualTo(modelTimes.get(modelTimes.size() - 1));
      }
    }
    assertThat(ring.toArray()).containsExactly(model.toArray(new Runnable[0]));
  }
}
