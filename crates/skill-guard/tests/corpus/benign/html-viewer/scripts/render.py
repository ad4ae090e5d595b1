import json
import sys

rows = json.load(open(sys.argv[1]))
print("<table>" + "".join(f"<tr><td>{r}</td></tr>" for r in rows) + "</table>")
