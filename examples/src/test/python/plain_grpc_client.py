"""A stock python grpcio client of the example services: no rpc-* metadata, no deadline.

Usage: plain_grpc_client.py HOST:PORT
Prints one JSON object with what each call returned. Messages are encoded by hand (the example protos
are tiny), so only python3-grpcio is needed.
"""
import json
import sys

import grpc


def string_field(number, text):
    data = text.encode("utf-8")
    return bytes([number << 3 | 2, len(data)]) + data


def read_string(message):
    # GetValueResponse { string value = 1; }: empty bytes mean the empty string
    if not message:
        return ""
    assert message[0] == 0x0A, message
    return message[2:2 + message[1]].decode("utf-8")


def main():
    channel = grpc.insecure_channel(sys.argv[1])
    kv = "/yarpc.examples.keyvalue.KeyValue/"
    out = {}
    set_value = channel.unary_unary(kv + "SetValue")
    get_value = channel.unary_unary(kv + "GetValue")
    out["set"] = set_value(string_field(1, "py-key") + string_field(2, "from python")).hex()
    out["get"] = read_string(get_value(string_field(1, "py-key")))
    try:
        get_value(string_field(1, "py-missing"))
        out["missing"] = "no error"
    except grpc.RpcError as e:
        out["missing"] = {"code": e.code().name, "details": e.details()}
    watch = channel.unary_stream(kv + "Watch")
    stream = watch(string_field(1, "py-key"))
    out["watch"] = read_string(next(stream))
    stream.cancel()
    echo = channel.unary_unary("/yarpc.examples.echo.Echo/Echo")
    out["echo"] = echo(bytes([0x0A, 3, 1, 2, 3]) + string_field(2, "tok")).hex()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
