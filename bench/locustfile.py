"""The agents' side of `make load`: turns and recalls over many spaces (run by bench/load.py)."""

import os
import random

from locust import HttpUser, between, task

SPACES = os.environ["ENGRAM_LOAD_SPACES"].split(",")
KEY = os.environ["ENGRAM_LOAD_KEY"]
MESSAGES = [
    "How many vans do we have again?", "Our depot moved to Ostrava.", "Can you deliver this Sunday?",
    "Please always call me before a delivery.", "We now have {n} drivers.", "Who gets our invoices?",
    "Thanks, that is all.", "Our renewal is in June now.",
]  # fmt: skip
QUERIES = ["How many vans?", "When is the renewal?", "Where is the depot?", "Who gets the invoices?"]


class Agent(HttpUser):
    wait_time = between(0.05, 0.25)

    def on_start(self):
        self.client.headers.update({"Authorization": f"Bearer {KEY}"})
        self.session = f"load-{random.randrange(10**9)}"

    @task(3)
    def turn(self):
        space = random.choice(SPACES)
        message = random.choice(MESSAGES).format(n=random.randint(2, 30))
        self.client.post(
            f"/api/v1/spaces/{space}/turns",
            json={"message": f"{message} ({random.randrange(10**9)})", "session_id": self.session},
            name="POST /turns",
        )

    @task(2)
    def recall(self):
        space = random.choice(SPACES)
        self.client.post(f"/api/v1/spaces/{space}/recall", json={"query": random.choice(QUERIES)}, name="POST /recall")
