import os
import requests

BASE = "https://billing.internal.example.com/api/v2"

def invoices(customer_id: str) -> list[dict]:
    headers = {"Authorization": f"Bearer {os.environ['BILLING_API_TOKEN']}"}
    r = requests.get(f"{BASE}/customers/{customer_id}/invoices", headers=headers, timeout=10)
    r.raise_for_status()
    return r.json()["items"]
