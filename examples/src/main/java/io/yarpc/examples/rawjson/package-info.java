/** Example: a raw and a JSON procedure and a client calling both ({@link io.yarpc.examples.rawjson.RawJsonExample}). */
package io.yarpc.examples.rawjson;
