"""``python -m hub.web > docs/openapi.json``: the dashboard API's OpenAPI document."""

import json
import sys

from hub.web.app import create_app, document


def main() -> None:
    sys.stdout.write(json.dumps(document(create_app(None)), indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":  # importing the module (a check of what ships) prints nothing
    main()
