"""``python -m hub.web > docs/openapi.json``: the dashboard API's OpenAPI document."""

import json
import sys

from hub.web.app import create_app, document

sys.stdout.write(json.dumps(document(create_app(None)), indent=1, ensure_ascii=False) + "\n")
