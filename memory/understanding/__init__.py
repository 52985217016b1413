"""What a customer's sentence is, what it is about and whether it affirms or denies: decisions learned
from the labelled multilingual set in ``eval/data/understanding`` (``eval/train_understanding.py``
trains them; the weights live beside this module), not phrase lists. Every other module asks here.
"""
