package io.yarpc;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a package or a type that is public only so that other yarpc-java modules can use it: not an API,
 * may change or disappear in any release, and is left out of the build's API check (see {@code
 * CONTRIBUTING.md}). Applications and third-party transports, encodings and middleware must not use it.
 *
 * <p>Every package named {@code ...internal} carries it in its {@code package-info.java}; the API check
 * fails the build when one does not. A type outside such a package may carry it when it has to be public
 * for a sibling module only.
 */
@Documented
@Retention(RetentionPolicy.CLASS)
@Target({ElementType.PACKAGE, ElementType.TYPE})
public @interface Internal {}
