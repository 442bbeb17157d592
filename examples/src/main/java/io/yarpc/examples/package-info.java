/**
 * The runnable examples of yarpc-java, built into {@code examples/target/yarpc-examples.jar}: {@link
 * io.yarpc.examples.Main} with the {@code demo}, {@code serve} and {@code call} commands, and the small
 * example programs in the sub-packages ({@code rawjson}, {@code protobuf}, {@code middleware}, {@code
 * gateway}), each a class with a {@code main}.
 */
package io.yarpc.examples;
