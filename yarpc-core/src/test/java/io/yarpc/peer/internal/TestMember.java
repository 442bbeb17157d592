package io.yarpc.peer.internal;

/** A {@link Member} whose pending count a test sets. */
final class TestMember extends Member {
  TestMember(String identifier) {
    super(identifier);
  }

  TestMember pending(int count) {
    pending.set(count);
    return this;
  }
}
