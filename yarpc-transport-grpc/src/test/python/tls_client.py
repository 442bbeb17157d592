"""A stock python grpcio client over TLS: a health check and one Echo call, with raw bytes.

Usage: tls_client.py HOST:PORT CA_PEM [CERT_PEM KEY_PEM]
Trusts CA_PEM, presents CERT_PEM and KEY_PEM when given (mutual TLS), and expects the server's
certificate to name "localhost". Prints one JSON object: the health check's response and the Echo
response as hex, or the failure's status code and details.
"""
import json
import sys

import grpc


def read(path):
    with open(path, "rb") as f:
        return f.read()


def main():
    target, ca = sys.argv[1], sys.argv[2]
    cert = read(sys.argv[3]) if len(sys.argv) > 4 else None
    key = read(sys.argv[4]) if len(sys.argv) > 4 else None
    credentials = grpc.ssl_channel_credentials(
        root_certificates=read(ca), private_key=key, certificate_chain=cert)
    out = {}
    options = [("grpc.ssl_target_name_override", "localhost")]
    with grpc.secure_channel(target, credentials, options=options) as channel:
        try:
            # grpc.health.v1.HealthCheckRequest{} is empty; no serializer: bytes in, bytes out
            health = channel.unary_unary("/grpc.health.v1.Health/Check")(b"", timeout=10)
            out["health"] = health.hex()
            # yarpc.test.echo.EchoRequest{message: "python"}
            request = bytes([0x0A, 6]) + b"python"
            echo = channel.unary_unary("/yarpc.test.echo.Echo/Unary")(request, timeout=10)
            out["echo"] = echo.hex()
        except grpc.RpcError as e:
            out["code"] = e.code().name
            out["details"] = e.details()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
