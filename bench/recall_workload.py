"""The recall comparison's workload: synthetic customer facts per space and questions aimed at one fact each.

Deterministic for a seed. Every space gets at most one fact of each kind (residence, pets, company size,
allergies, orders, dates, ...), so a question aimed at a fact has exactly one right answer in its space, and
the question is worded differently from the fact it aims at (it shares the subject, rarely the words).

>>> workload = build_workload(spaces=2, facts_per_space=3, questions=4, seed=1)
>>> len(workload["spaces"]), len(workload["spaces"][0]["facts"]), len(workload["questions"])
(2, 3, 4)
"""

from __future__ import annotations

import random

# Each kind of fact: ways a customer says it, ways an agent later asks about it, and the values to fill in.
FACT_KINDS = [
    (["I live in {city}.", "We moved to {city} last year and live there now."],
     ["Which city is the customer based in?", "Where does this customer live?"]),
    (["My dog is called {pet_name}.", "We have a {breed} named {pet_name}."],
     ["What is the name of their dog?", "Does the customer have a pet?"]),
    (["Our company has {staff} employees.", "We are a team of {staff} people."],
     ["How big is the customer's company?", "How many staff work there?"]),
    (["I am allergic to {allergen}.", "I have a {allergen} allergy."],
     ["Does the customer have any food allergies?", "What must we avoid because of an allergy?"]),
    (["I prefer to be contacted by {channel}.", "Please reach me by {channel}."],
     ["How should we get in touch with this customer?", "What is their preferred contact method?"]),
    (["My last order was {order_id}.", "Order {order_id} is the one I placed last."],
     ["What was the customer's most recent order number?", "Which order did they place last?"]),
    (["My birthday is on {date}.", "I was born on {date}."],
     ["When is the customer's birthday?", "What is their date of birth?"]),
    (["Our office is on the {floor} floor.", "We work from the {floor} floor of our building."],
     ["Which floor is their office on?", "Where in the building do they work?"]),
    (["My daughter {child} starts school in {month}.", "{child}, my daughter, begins school in {month}."],
     ["When does the customer's child start school?", "What is happening with their daughter's schooling?"]),
    (["I drive a {car}.", "My car is a {car}."],
     ["What car does the customer own?", "Which vehicle do they drive?"]),
    (["We use {software} for our accounting.", "Our bookkeeping runs on {software}."],
     ["Which accounting tool does the customer use?", "What software keeps their books?"]),
    (["I am vegetarian.", "I don't eat meat at all."],
     ["Is there a dietary restriction we should know about?", "Does the customer eat meat?"]),
    (["My subscription renews every {month}.", "Our plan is renewed each year in {month}."],
     ["When is their subscription renewal?", "In which month does the plan renew?"]),
    (["I work as a {job}.", "My job is {job}."],
     ["What does the customer do for a living?", "What is their profession?"]),
    (["I speak {language} at home.", "At home we talk in {language}."],
     ["Which language does the customer speak at home?", "What is their home language?"]),
    (["Our warehouse is in {city}.", "We keep our stock in a warehouse in {city}."],
     ["Where is the customer's warehouse located?", "In which city do they store inventory?"]),
    (["I ordered {chairs} chairs for the new office.", "We bought {chairs} office chairs from you."],
     ["How many chairs did they order?", "What furniture did the customer buy for the office?"]),
    (["My favourite colour is {colour}.", "I really like {colour} things."],
     ["Which colour does the customer like best?", "What colour would they prefer?"]),
    (["I have two cats, {pet_name} and {pet_name2}.", "Our cats are called {pet_name} and {pet_name2}."],
     ["What are the names of the customer's cats?", "Do they own any cats?"]),
    (["My partner's name is {partner}.", "I am married to {partner}."],
     ["Who is the customer's spouse?", "What is their partner called?"]),
    (["We ship about {parcels} parcels a week.", "Every week we send roughly {parcels} packages."],
     ["How many parcels does the customer send weekly?", "What is their weekly shipping volume?"]),
    (["I usually fly from {airport} airport.", "My home airport is {airport}."],
     ["Which airport does the customer depart from?", "Where do they usually catch flights?"]),
    (["I play {sport} on weekends.", "At the weekend I go and play {sport}."],
     ["What sport does the customer do?", "How do they spend their weekends?"]),
    (["My apartment has {rooms} rooms.", "We rent a flat with {rooms} rooms."],
     ["How large is the customer's flat?", "How many rooms are in their apartment?"]),
    (["I am lactose intolerant.", "Milk products make me ill, I am lactose intolerant."],
     ["Can the customer have dairy?", "Is there a problem with milk for this customer?"]),
    (["Our invoices go to {accountant}.", "Please send every invoice to {accountant}."],
     ["Who receives the customer's invoices?", "Where should the billing go?"]),
    (["I wear shoe size {shoe}.", "My shoe size is {shoe}."],
     ["What size shoes does the customer take?", "Which shoe size should we send?"]),
    (["We run a fleet of {vans} vans.", "Our delivery fleet is {vans} vans."],
     ["How many vehicles are in their fleet?", "How many delivery vans does the customer operate?"]),
    (["My phone is a {phone}.", "I use a {phone} as my phone."],
     ["Which mobile phone does the customer have?", "What smartphone do they use?"]),
    (["I am training for a marathon in {month}.", "In {month} I will run a marathon."],
     ["Which race is the customer preparing for?", "When is their marathon?"]),
    (["Our company was founded in {year}.", "We started the business in {year}."],
     ["When was the customer's company established?", "How old is their business?"]),
    (["I take my coffee with oat milk.", "Oat milk in my coffee, always."],
     ["How does the customer like their coffee?", "What milk do they want in coffee?"]),
    (["My son {child} is {age} years old.", "{child}, our son, is {age}."],
     ["How old is the customer's son?", "What is the age of their boy?"]),
    (["We close the shop on {weekday}s.", "Our store is shut every {weekday}."],
     ["On which day is the customer's shop closed?", "When is their store not open?"]),
    (["I am learning to play the {instrument}.", "I take {instrument} lessons."],
     ["Which instrument is the customer learning?", "What music lessons do they have?"]),
    (["My bank is {bank}.", "I keep my accounts at {bank}."],
     ["Which bank does the customer use?", "Where do they hold their bank account?"]),
    (["Our server runs in {region}.", "We host everything in the {region} region."],
     ["Where is the customer's infrastructure hosted?", "Which cloud region do they use?"]),
    (["I have a gluten intolerance.", "Gluten upsets my stomach."],
     ["Can the customer eat wheat bread?", "Is gluten a problem for them?"]),
    (["My anniversary is on {date}.", "We got married on {date}."],
     ["When is the customer's wedding anniversary?", "What date did they marry?"]),
    (["I grow tomatoes in my garden.", "We have a vegetable garden full of tomatoes."],
     ["What does the customer grow at home?", "Does the customer do any gardening?"]),
]  # fmt: skip

VALUES = {
    "city": ["Lisbon", "Brno", "Leeds", "Porto", "Graz", "Lyon", "Utrecht", "Gdansk", "Bergen", "Valencia"],
    "pet_name": ["Max", "Bella", "Luna", "Rex", "Milo", "Nala", "Oscar", "Daisy", "Toby", "Coco"],
    "pet_name2": ["Pepper", "Ginger", "Shadow", "Misty", "Felix", "Tiger"],
    "breed": ["beagle", "border collie", "labrador", "dachshund", "poodle"],
    "staff": ["4", "12", "25", "40", "65", "120", "300"],
    "chairs": ["6", "10", "15", "24", "40"],
    "parcels": ["30", "80", "150", "400", "1,200"],
    "rooms": ["two", "three", "four", "five"],
    "vans": ["3", "5", "7", "12", "20"],
    "allergen": ["peanuts", "shellfish", "sesame", "walnuts", "eggs", "soy"],
    "channel": ["email", "phone", "text message", "WhatsApp", "post"],
    "order_id": ["#48213", "#51907", "#60344", "#71822", "#83019", "#90456"],
    "date": ["3 March", "14 April", "22 June", "9 September", "30 October", "5 December"],
    "floor": ["second", "third", "fifth", "seventh", "ninth"],
    "child": ["Anna", "Ella", "Sofia", "Maya", "Clara", "Leo", "Tom", "Jakub", "Oliver"],
    "month": ["January", "March", "May", "August", "September", "November"],
    "car": ["Skoda Octavia", "Toyota Prius", "Volvo XC60", "Renault Clio", "Tesla Model 3"],
    "software": ["Xero", "QuickBooks", "Sage", "FreeAgent", "Odoo"],
    "job": ["nurse", "architect", "teacher", "software developer", "baker", "plumber"],
    "language": ["Portuguese", "Czech", "Polish", "Spanish", "German", "Italian"],
    "colour": ["green", "navy blue", "yellow", "burgundy", "teal"],
    "partner": ["David", "Marek", "Joana", "Petra", "Lukas", "Emma"],
    "accountant": ["Jana Novak", "our accountant Sam", "billing@northwind.example", "Mr Okafor", "the finance team"],
    "airport": ["Heathrow", "Schiphol", "Vienna", "Prague", "Lisbon"],
    "sport": ["tennis", "football", "badminton", "volleyball", "padel"],
    "shoe": ["38", "40", "42", "44", "46"],
    "phone": ["Pixel 8", "iPhone 15", "Galaxy S23", "Fairphone 5"],
    "year": ["1998", "2004", "2011", "2016", "2020"],
    "age": ["6", "8", "11", "14", "17"],
    "weekday": ["Monday", "Tuesday", "Sunday", "Wednesday"],
    "instrument": ["piano", "guitar", "violin", "cello", "saxophone"],
    "bank": ["ING", "Santander", "Revolut", "Barclays", "Raiffeisen"],
    "region": ["Frankfurt", "Ireland", "Stockholm", "Paris", "Milan"],
}


def _fill(template: str, values: dict[str, str]) -> str:
    return template.format(**values)


def build_workload(*, spaces: int = 50, facts_per_space: int = 40, questions: int = 200, seed: int = 17) -> dict:
    """``{"spaces": [{"name", "facts": [text]}], "questions": [{"space", "fact", "question"}]}``.

    ``fact`` is the index of the aimed fact in its space's list. Questions are spread over the spaces round
    robin and never aim at the same fact twice.
    """
    if not 1 <= facts_per_space <= len(FACT_KINDS):
        raise ValueError(f"facts_per_space must be between 1 and {len(FACT_KINDS)}")
    if not 0 <= questions <= spaces * facts_per_space:
        raise ValueError("more questions than facts")
    rng = random.Random(seed)
    built, question_pool = [], []
    for index in range(spaces):
        kinds = rng.sample(range(len(FACT_KINDS)), facts_per_space)
        facts = []
        for position, kind in enumerate(kinds):
            statements, asks = FACT_KINDS[kind]
            values = {name: rng.choice(options) for name, options in VALUES.items()}
            facts.append(_fill(rng.choice(statements), values))
            question_pool.append((index, position, rng.choice(asks)))
        built.append({"name": f"customer-{index:03d}", "facts": facts})
    # Round robin over the spaces, a random fact of each: every space is asked about, none twice the same.
    per_space = [[q for q in question_pool if q[0] == index] for index in range(spaces)]
    for candidates in per_space:
        rng.shuffle(candidates)
    chosen = []
    while len(chosen) < questions:
        for candidates in per_space:
            if candidates and len(chosen) < questions:
                chosen.append(candidates.pop())
    return {
        "seed": seed,
        "spaces": built,
        "questions": [
            {"space": built[space]["name"], "fact": fact, "question": question} for space, fact, question in chosen
        ],
    }


def warm_up_queries() -> list[str]:
    """Questions outside the measured set, so warm-up fills no cache the measured questions then hit."""
    return [
        "Is there anything we should know before calling?",
        "What did the customer tell us about their family?",
        "Any notes about deliveries?",
        "What is the customer's usual budget?",
        "Have they mentioned their holidays?",
    ]
