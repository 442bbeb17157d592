/**
 * The raw encoding ({@code "raw"}): bodies are opaque bytes. Servers register {@link
 * io.yarpc.encoding.raw.Raw#procedure} handlers; clients call through {@link
 * io.yarpc.encoding.raw.RawClient}.
 */
package io.yarpc.encoding.raw;
