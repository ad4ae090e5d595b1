import os
from dataclasses import dataclass

@dataclass
class Settings:
    database_url: str
    api_key: str
    debug: bool

def load() -> Settings:
    return Settings(
        database_url=os.environ.get("DATABASE_URL", "postgres://localhost/app"),
        api_key=os.environ.get("STRIPE_API_KEY", ""),
        debug=os.environ.get("DEBUG", "0") == "1",
    )
