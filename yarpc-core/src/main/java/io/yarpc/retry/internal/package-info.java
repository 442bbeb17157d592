/** Implementation details of {@link io.yarpc.retry}; not a public API, may change without notice. */
@Internal
package io.yarpc.retry.internal;

import io.yarpc.Internal;
