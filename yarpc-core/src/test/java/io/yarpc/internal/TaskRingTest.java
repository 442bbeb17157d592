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
  void tasksComeOutOldestFirstWithTheirTimesWhenTheRingGrowsWrapped() {
    TaskRing ring = new TaskRing();
    Runnable[] t = tasks(40);
    // 10 in, 8 out: two left at slots 8 and 9, so the next ones wrap past slot 15 before it grows
    for (int i = 0; i < 10; i++) {
      ring.add(t[i], i);
    }
    for (int i = 0; i < 8; i++) {
      assertThat(ring.poll()).isSameAs(t[i]);
    }
    for (int i = 10; i < 40; i++) {
      ring.add(t[i], i);
    }
    assertThat(ring.capacity()).isEqualTo(32);
    assertThat(ring.size()).isEqualTo(32);
    for (int i = 0; i < 32; i++) {
      assertThat(ring.queuedAt(i)).isEqualTo(8 + i);
    }
    for (int i = 8; i < 40; i++) {
      assertThat(ring.poll()).isSameAs(t[i]);
    }
    assertThat(ring.poll()).isNull();
    assertThat(ring.isEmpty()).isTrue();
  }

  @Test
  void removeClosesTheGapAcrossTheEndOfTheArray() {
    TaskRing ring = new TaskRing();
    Runnable[] t = tasks(30);
    // move head to slot 13 without ever emptying the ring (an empty ring starts again at slot 0)
    ring.add(t[20], 0);
    for (int i = 0; i < 12; i++) {
      ring.add(t[21], 0);
      ring.poll();
    }
    for (int i = 0; i < 8; i++) {
      ring.add(t[i], 100 + i);
    }
    assertThat(ring.poll()).isSameAs(t[21]);
    // t0..t7 in slots 13, 14, 15, 0, 1, 2, 3, 4
    assertThat(ring.capacity()).isEqualTo(16);
    assertThat(ring.remove(t[2])).isTrue(); // slot 15: the newer ones move back across slot 0
    assertThat(ring.remove(t[2])).isFalse();
    assertThat(ring.remove(t[25])).isFalse();
    assertThat(ring.toArray()).containsExactly(t[0], t[1], t[3], t[4], t[5], t[6], t[7]);
    long[] times = new long[ring.size()];
    for (int i = 0; i < times.length; i++) {
      times[i] = ring.queuedAt(i);
    }
    assertThat(times).containsExactly(100, 101, 103, 104, 105, 106, 107);
    assertThatThrownBy(() -> ring.queuedAt(7)).isInstanceOf(IndexOutOfBoundsException.class);
    assertThat(ring.drain()).containsExactly(t[0], t[1], t[3], t[4], t[5], t[6], t[7]);
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
      Runnable[] inRing = ring.toArray();
      Runnable[] inModel = model.toArray(new Runnable[0]);
      int mismatch = -1;
      for (int i = 0; i < inModel.length && mismatch < 0; i++) {
        if (inRing[i] != inModel[i] || ring.queuedAt(i) != modelTimes.get(i)) {
          mismatch = i;
        }
      }
      assertThat(mismatch).as("first entry that differs, at step %d", step).isEqualTo(-1);
    }
    assertThat(ring.toArray()).containsExactly(model.toArray(new Runnable[0]));
  }
}
