/** Plumbing shared by the encodings; not a public API and may change at any time. */
@Internal
package io.yarpc.encoding.internal;

import io.yarpc.Internal;
