/**
 * The JSON encoding ({@code "json"}) on Gson: servers register {@link
 * io.yarpc.encoding.json.Json#procedure} handlers taking and returning plain Java objects; clients call
 * through {@link io.yarpc.encoding.json.JsonClient}. Bodies are UTF-8 JSON; responses end with a newline,
 * as yarpc-go's encoder writes them.
 */
package io.yarpc.encoding.json;
