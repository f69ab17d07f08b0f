"""Adversarial: forges a passing verdict in its working directory, then leaves without a trace."""
import json
import os

with open("result.json", "w") as f:
    json.dump({"status": "passed", "checks": []}, f)
os._exit(0)
