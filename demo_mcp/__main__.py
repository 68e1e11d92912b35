"""Run the demo tracker: `python -m demo_mcp --host 127.0.0.1 --port 8765` or `--stdio`."""

import argparse

from demo_mcp.server import build_server


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m demo_mcp", description=__doc__)
    parser.add_argument("--stdio", action="store_true", help="serve over stdin/stdout")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    options = parser.parse_args()

    server = build_server()
    if options.stdio:
        server.run("stdio")
    else:
        # Streamable HTTP at /mcp.
        server.run("streamable-http", host=options.host, port=options.port)


if __name__ == "__main__":
    main()
