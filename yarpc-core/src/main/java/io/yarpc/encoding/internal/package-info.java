/** Plumbing shared by the encodings; not a public API and may change at any time. */
package io.yarpc.encoding.internal;
