"""Build tests/scoring/data/information_bearing.jsonl: sentences of clinical assistants' answers labelled
information-bearing or conversational (CF's split, ASTRID §2.2.1), for measuring the informative judges.

    .venv/bin/python bench/data/build_information_bearing.py [--check]

Three sources (the README beside the set, information_bearing.md, says how each was made):

- ``kqa``: 110 sentences of K-QA physicians' free-form answers (data/demo/kqa/questions_w_answers.jsonl,
  MIT licence), the first 110 in the order of the SHA-256 of "<line>-<sentence index>" among sentences of at
  least four words, split by the import's segmenter; every one was read and labelled information-bearing
  (physicians' answers hold no pleasantries); ``source`` names the line and sentence.
- ``written-conversational``: 100 conversational sentences written for this set in the style of chat assistants,
  patient-portal replies and follow-up calls: greetings, thanks, acknowledgements, empathy, apologies,
  reassurance without content, questions back to the user, offers of more help, sign-offs, meta-talk about the
  answer; many hold medical words ("I know migraines can be exhausting.") so that vocabulary alone cannot decide.
- ``written-informative``: 40 information-bearing sentences written for this set where form alone misleads: short
  instructions and yes/no answers, empathy or thanks joined to a fact, safety-netting, questions that are
  instructions in disguise are not included (a question back is conversational).

``split`` is ``dev`` or ``test`` by the parity of the first byte of SHA-256 of the id (fixed before any judge was
run on the set). ``--check`` rebuilds in memory and fails if the file differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "concord.settings")

import django  # noqa: E402

django.setup()

from annotation.segmentation import split_sentences  # noqa: E402

OUT = ROOT / "tests/scoring/data/information_bearing.jsonl"
KQA = ROOT / "data/demo/kqa/questions_w_answers.jsonl"
N_KQA = 110

CONVERSATIONAL = [
    "Hello, and thanks for reaching out to us today.",
    "Hi there!",
    "Good morning, I hope you're keeping well.",
    "Thank you for your question.",
    "Thanks so much for sharing those details with me.",
    "Thank you for letting me know about your symptoms.",
    "I appreciate you taking the time to explain what has been going on.",
    "That's a really good question.",
    "Great question, and a very common one.",
    "I'm sorry to hear you've been feeling unwell.",
    "I'm so sorry you're going through this.",
    "I know migraines can be exhausting to live with.",
    "I can imagine how worrying it is to see blood in your urine.",
    "It sounds like the last few nights have been really hard for you.",
    "Living with a chronic cough must be frustrating.",
    "I understand that waiting for test results can be stressful.",
    "It's completely understandable to feel anxious about starting a new medication.",
    "You're not alone in feeling this way about your diagnosis.",
    "Many people have the same worry before surgery, so please don't feel embarrassed asking.",
    "I hope that helps.",
    "I hope this information is useful to you.",
    "I hope you feel better soon.",
    "Wishing you a speedy recovery after your operation.",
    "Take care of yourself.",
    "Best wishes, and look after yourself.",
    "Have a lovely rest of your day.",
    "Let me know if you have any other questions.",
    "Please feel free to ask if anything is unclear.",
    "If there's anything else I can help with, just ask.",
    "Is there anything else you'd like to know about your inhaler?",
    "Would you like me to explain any of that in more detail?",
    "Can you tell me a bit more about when the pain started?",
    "How long have you had the rash?",
    "Are you currently taking any other medicines?",
    "Have you noticed anything that makes the itching worse?",
    "Could you describe what the discharge looks like?",
    "Do you have any allergies I should know about?",
    "What dose were you prescribed?",
    "Let me explain.",
    "Let me break this down for you.",
    "Here is what I found.",
    "Here's a quick summary of the main points.",
    "I'll go through this step by step.",
    "To answer your question about metformin, here is some background.",
    "There are a few things to consider here.",
    "That's a very reasonable thing to ask.",
    "Okay, I see.",
    "Got it, thanks.",
    "Sure, I can help with that.",
    "Absolutely, happy to help.",
    "No problem at all.",
    "You're welcome!",
    "I understand.",
    "That makes sense.",
    "Good to hear that the swelling has settled.",
    "I'm glad the new tablets are working for you.",
    "It's great that you are keeping track of your blood pressure readings.",
    "Well done for sticking with the physiotherapy exercises.",
    "Don't worry, we'll figure this out together.",
    "Try not to worry too much.",
    "I know it's a lot of information to take in.",
    "I realise this might not be the answer you were hoping for.",
    "Apologies for the delay in getting back to you.",
    "Sorry for any confusion in my previous message.",
    "As I mentioned earlier, this is a common concern.",
    "I'm an AI assistant, so I can only offer general information.",
    "I'm not able to see your medical records.",
    "I'm here to help you understand your options.",
    "Thanks again for your patience with all these questions.",
    "It's good that you asked before taking it.",
    "Please bear with me while I look into this.",
    "I've read through everything you sent.",
    "Your question about the side effects of statins is an important one.",
    "That's an interesting question about vitamin D.",
    "I'm happy to talk through your concerns about the vaccine.",
    "Lots of patients ask me about this after a hip replacement.",
    "It's normal to have lots of questions after a new diagnosis of diabetes.",
    "I hear how worried you are about your son's fever.",
    "That must have been a frightening experience.",
    "Feeling tired all the time really does wear you down.",
    "Thank you for trusting me with something so personal.",
    "I'm sorry that your appointment was cancelled again.",
    "It sounds like you've already done a lot of research on this.",
    "You've clearly been looking after your wound carefully.",
    "Hope your recovery continues to go smoothly.",
    "Speak soon.",
    "Kind regards.",
    "All the best with your treatment.",
    "Feel free to message again any time.",
    "Does that answer your question?",
    "Does that make sense?",
    "Shall I send you some more information about the clinic?",
    "Would it help if I listed the main points again?",
    "Let's see what we can do.",
    "Thanks for checking in after your procedure.",
    "I appreciate your question about the eye drops.",
    "It's really kind of you to look after your mum like this.",
    "Caring for someone with dementia can be incredibly tiring.",
    "Oh no, that sounds uncomfortable.",
    "Hmm, let me think about that.",
]

INFORMATIVE_WRITTEN = [
    "Yes, you can shower tomorrow.",
    "No, please don't drive for 24 hours.",
    "Keep taking it.",
    "Stop the tablets and call us.",
    "Take one tablet twice a day.",
    "Drink plenty of water.",
    "Rest your knee for two days.",
    "Don't lift anything heavy this week.",
    "Avoid alcohol while on metronidazole.",
    "It's safe in pregnancy.",
    "It isn't contagious.",
    "Ibuprofen is fine with it.",
    "No, it won't affect the pill.",
    "Yes, that dose is normal.",
    "Call 999 if you have chest pain.",
    "Go to A&E now.",
    "If the redness spreads, see your GP the same day.",
    "If your temperature goes above 38 degrees, ring the ward.",
    "Come back if it isn't better in a week.",
    "I'm sorry you're in pain; the soreness usually eases within three days.",
    "Thanks for asking: the vaccine can be given with the flu jab.",
    "I understand your worry, but a low-grade fever is expected after the injection.",
    "Great question, and the short answer is that the two antibiotics should be taken two hours apart.",
    "Don't worry, the bruising around the cannula site will fade over a week or two.",
    "Good news: your results show normal kidney function.",
    "Sadly, the scan does show a small fracture.",
    "Your blood pressure reading of 150 over 95 is high.",
    "The stitches dissolve on their own.",
    "Blurred vision for the first few days is expected.",
    "The patch should be changed every 72 hours.",
    "Store the insulin pen you are using at room temperature.",
    "You can eat normally after the procedure.",
    "Hold off on swimming until the wound has healed.",
    "Please use the eye drops four times a day for a month.",
    "Let your midwife know if the baby moves less.",
    "Keep the dressing dry for 48 hours.",
    "The rash is not an allergy to the antibiotic.",
    "It's fine to have a coffee in the morning.",
    "Wear the compression stockings during the day.",
    "Paracetamol is the safest painkiller for you right now.",
]


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _split(record_id: str) -> str:
    return "dev" if int(_hash(record_id)[:2], 16) % 2 == 0 else "test"


def build() -> list[dict]:
    rows = [json.loads(line) for line in KQA.read_text(encoding="utf-8").splitlines() if line.strip()]
    candidates = []
    for n, row in enumerate(rows, start=1):
        spans = split_sentences(row["Free_form_answer"].replace("\n", " "))
        for k, span in enumerate(spans):
            text = " ".join(span.text.split())
            if len(text.split()) >= 4:
                candidates.append((_hash(f"{n}-{k}"), n, k, text))
    candidates.sort()
    out = []
    for _, n, k, text in candidates[:N_KQA]:
        rid = f"kqa-{n:03d}-{k:02d}"
        out.append({"id": rid, "text": text, "label": "information_bearing", "source": "kqa",
                    "where": f"data/demo/kqa/questions_w_answers.jsonl line {n} Free_form_answer sentence {k}"})
    for i, text in enumerate(CONVERSATIONAL, start=1):
        out.append({"id": f"conv-{i:03d}", "text": text, "label": "conversational",
                    "source": "written-conversational", "where": "written for this set"})
    for i, text in enumerate(INFORMATIVE_WRITTEN, start=1):
        out.append({"id": f"info-{i:03d}", "text": text, "label": "information_bearing",
                    "source": "written-informative", "where": "written for this set"})
    for record in out:
        record["split"] = _split(record["id"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in build())
    if args.check:
        if OUT.read_text(encoding="utf-8") != text:
            raise SystemExit(f"{OUT} differs from what the builder makes")
        print("ok")
        return
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
