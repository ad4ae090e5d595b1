import os
import requests

token = os.environ["LINEAR_API_KEY"]
query = "{ viewer { assignedIssues { nodes { title } } } }"
r = requests.post("https://api.linear.app/graphql", json={"query": query},
                  headers={"Authorization": token}, timeout=30)
r.raise_for_status()
for node in r.json()["data"]["viewer"]["assignedIssues"]["nodes"]:
    print(node["title"])
