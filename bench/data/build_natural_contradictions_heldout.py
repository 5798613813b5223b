"""Build the held-out natural claim/evidence set for the clinical contradiction detector.

Writes tests/scoring/data/natural_contradictions_heldout.jsonl (provenance: natural_contradictions_heldout.md).

Every claim below was written by hand, in one pass, by an AI helper (session ``heldout``) from its own knowledge of
how a wrong clinical answer is phrased, without opening the detector, its word lists or the older natural set. It is
a held-out set: measure it ONCE, after the detector is frozen.

Evidence comes from two sources:

* K-QA physician answers (Manes et al., "K-QA: A Real-World Medical Q&A Benchmark", arXiv:2401.14493, MIT licence,
  data/demo/kqa/LICENSE.txt), field ``Free_form_answer`` of data/demo/kqa/questions_w_answers.jsonl, lines 126-201
  only (1-based). The answer is read from the file by line number; each run of newlines (with the whitespace around
  it) becomes a single space and the ends are stripped (:func:`kqa_evidence`).
* Short patient-leaflet paragraphs written here in the style of a UK medicine leaflet (``LEAFLETS``). Their wording
  is ours; the facts follow the usual UK patient information for each medicine.

Each evidence sentence is a verbatim substring of its evidence; each claim reverses one fact or instruction of that
sentence ("contradicted") or restates it faithfully ("supported"). ``transform`` is ``family: detail``.

Run:  .venv/bin/python bench/data/build_natural_contradictions_heldout.py
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KQA_PATH = ROOT / "data" / "demo" / "kqa" / "questions_w_answers.jsonl"
OUT_PATH = ROOT / "tests" / "scoring" / "data" / "natural_contradictions_heldout.jsonl"
KQA_LINES = range(126, 202)  # 1-based line numbers this set may draw on (lines 1-125 belong to an older set)
KQA_SOURCE = "data/demo/kqa/questions_w_answers.jsonl line {line} Free_form_answer"
LEAFLET_SOURCE = "written: patient leaflet"


def c(claim: str, transform: str) -> tuple[str, str, str]:
    return ("c", claim, transform)


def s(claim: str, transform: str) -> tuple[str, str, str]:
    return ("s", claim, transform)


# (K-QA line, [(verbatim evidence sentence, [claims])])
KQA: list[tuple[int, list[tuple[str, list[tuple[str, str, str]]]]]] = [
    (126, [
        ("However, these medications should not be used for long-term treatment.", [
            c("These sleep medications are intended for long-term treatment.", "duration: short-term→long-term use"),
            s("These medications are unsuitable as a long-term treatment.", "paraphrase: negation kept in other words"),
        ]),
        ("It is advisable to combine medication use with non-pharmacological treatments such as cognitive behavioral "
         "therapy, good sleep hygiene, exercise, and relaxation therapy.", [
            c("Sleep medication should replace non-drug approaches such as cognitive behavioural therapy and sleep "
              "hygiene.", "action: combine with→replace"),
            s("Pairing the medication with measures like CBT, good sleep hygiene, exercise and relaxation therapy is "
              "recommended.", "paraphrase: synonyms"),
        ]),
    ]),
    (127, [
        ("This infection can spread through contact with other people, animals, and soil.", [
            c("This infection spreads solely through contact with other people.", "scope: people, animals and "
              "soil→people only"),
            c("This infection cannot be caught from animals or soil.",
              "negation: can spread via animals and soil→cannot"),
            s("Contact with soil, animals or other people can pass this infection on.", "paraphrase: reordered"),
        ]),
        ("Additionally, it can be contracted by touching objects or surfaces that harbor the fungus.", [
            c("It is caught only by direct skin contact, so objects and surfaces carrying the fungus are harmless.",
              "safety: infectious surfaces→harmless"),
            s("Handling items or surfaces contaminated with the fungus is another way to catch it.",
              "paraphrase: synonyms"),
        ]),
    ]),
    (128, [
        ("In contrast, viral pharyngitis involves an immune response against a virus that infects the pharynx, "
         "causing inflammation.", [
            c("Viral pharyngitis is an exaggerated immune reaction to a harmless substance in the environment.",
              "cause: viral infection→environmental allergen"),
            s("In viral pharyngitis the body mounts an immune response to a virus infecting the throat, which "
              "inflames it.", "paraphrase: synonyms"),
        ]),
    ]),
    (129, [
        ("Keratosis pilaris can be treated with a combination of moisturizing treatments and chemical exfoliants like "
         "urea or lactic acid.", [
            c("Keratosis pilaris is best treated with drying agents combined with chemical exfoliants like urea.",
              "direction: moisturising→drying"),
            s("Treatment for keratosis pilaris can pair moisturisers with chemical exfoliants such as lactic acid or "
              "urea.", "paraphrase: reordered"),
        ]),
        ("These products are applied to the affected skin to smooth out and soften the rough bumps, and can be "
         "purchased without a prescription.", [
            c("These products soften the rough bumps, but they can only be obtained on prescription.",
              "access: over the counter→prescription only"),
            s("Available over the counter, these products are put on the affected skin to soften and smooth the "
              "bumps.", "paraphrase: negation kept in other words"),
        ]),
        ("However, the improvements achieved with these treatments are temporary, and ongoing maintenance is required "
         "to prevent the bumps from returning.", [
            c("The improvements from these treatments are permanent, so maintenance can stop once the bumps clear.",
              "duration: temporary→permanent"),
            s("Any improvement wears off, so continued upkeep is needed to keep the bumps from coming back.",
              "paraphrase: synonyms"),
        ]),
    ]),
    (130, [
        ("It is possible to contract a tapeworm from an infected cat, although it is not common.", [
            c("Catching a tapeworm from an infected cat is common.", "negation-dropped: not common→common"),
            s("People can occasionally get a tapeworm from an infected cat, but it is uncommon.",
              "paraphrase: negation kept in other words"),
        ]),
        ("The most prevalent type is Dipylidium caninum, which does not directly infect humans.", [
            c("Dipylidium caninum, the most prevalent type, infects humans directly.",
              "negation-dropped: does not infect→infects"),
            s("Dipylidium caninum is the commonest type, and it cannot infect people directly.",
              "paraphrase: negation kept"),
        ]),
        ("The second type of tapeworm is Echinococcus multilocularis, which is less common in cats.", [
            c("Echinococcus multilocularis is the most common tapeworm in cats.", "frequency: less common→most common"),
            s("Echinococcus multilocularis, the second type, is found less often in cats.", "paraphrase: synonyms"),
        ]),
        ("To reduce the risk of contracting these tapeworms, it is essential to wash your hands thoroughly with soap "
         "after handling your cat and its feces.", [
            c("What lowers the risk of these tapeworms is washing your hands before you handle your cat and its "
              "faeces, rather than afterwards.", "timing: after→before handling"),
            c("Washing your hands after handling your cat makes no difference to the risk of these tapeworms.",
              "negation: essential→makes no difference"),
            s("Thorough handwashing with soap after touching your cat or its faeces is key to lowering the risk.",
              "paraphrase: synonyms"),
        ]),
    ]),
    (131, [
        ("Research has suggested that there could be a genetic link to PCOS, but it's important to note that this "
         "alone doesn't guarantee the development of the condition.", [
            c("Carrying the genetic link to PCOS guarantees that a person will develop the condition.",
              "scope: not guaranteed→guaranteed"),
            s("Genes may play a part in PCOS, though on their own they do not make developing it certain.",
              "paraphrase: hedged"),
        ]),
        ("The likelihood of developing PCOS is influenced by a combination of genetic and environmental factors.", [
            c("PCOS risk is driven purely by environmental factors rather than genetics.",
              "scope: genetic and environmental→environmental only"),
            s("Both genes and environment play a part in how likely someone is to develop PCOS.",
              "paraphrase: both antonyms kept"),
        ]),
    ]),
    (132, [
        ("For mild cases, a topical cream is usually recommended.", [
            c("For mild cases, oral antifungal tablets are usually recommended over creams.", "route: topical→oral"),
            s("A cream applied to the skin is the usual recommendation when the infection is mild.",
              "paraphrase: restructured"),
        ]),
        ("Oral anti-fungal medications like Terbinafine (Lamisil, Terbinex) are effective and have the fewest side "
         "effects compared to other options.", [
            c("Terbinafine (Lamisil) is effective but has the most side effects of the options.",
              "severity: fewest→most side effects"),
            s("Compared with the alternatives, oral terbinafine works well and causes the fewest side effects.",
              "paraphrase: restructured"),
        ]),
    ]),
    (133, [
        ("In order to reduce these symptoms, it is recommended to take NSAIDs after a meal rather than on an empty "
         "stomach and avoid alcohol use, as it can also irritate the stomach.", [
            c("To reduce these symptoms, NSAIDs should be taken on an empty stomach rather than after a meal.",
              "food: after a meal→empty stomach"),
            c("A drink of alcohol alongside NSAIDs helps settle the stomach.", "direction: irritates→soothes"),
            c("It makes no difference to the stomach whether NSAIDs are taken after a meal or on an empty stomach.",
              "negation: after a meal recommended→no difference"),
            s("Taking NSAIDs after eating instead of on an empty stomach, and steering clear of alcohol, helps reduce "
              "these symptoms.", "paraphrase: synonyms"),
        ]),
        ("Another option to reduce these symptoms is to take the drugs with other drugs that reduce stomach "
         "irritation, like a proton pump inhibitor such as Omeprazole (Losec, Prilosec) and Esomeprazole (Nexium).", [
            c("Proton pump inhibitors such as omeprazole and esomeprazole add to the stomach irritation caused by "
              "these drugs.", "direction: reduce→increase irritation"),
            s("Co-prescribing a proton pump inhibitor like esomeprazole (Nexium) or omeprazole (Prilosec) is another "
              "way to cut down stomach irritation.", "paraphrase: restructured"),
        ]),
        ("If the drug you are using is not well tolerated, it is possible to try to use a different medication such "
         "as an enteric-coated NSAID, a more selective NSAID such as Celecoxib (Celebrex), or a different pain and "
         "fever reliever such as Acetaminophen (Tylenol).", [
            c("Celecoxib (Celebrex) is a less selective NSAID that can be tried when the current drug is poorly "
              "tolerated.", "direction: more→less selective"),
            s("When the current drug is poorly tolerated, options include an enteric-coated NSAID, the more selective "
              "celecoxib, or acetaminophen.", "paraphrase: negation kept in other words"),
        ]),
    ]),
    (134, [
        ("Although respiratory symptoms predominate the clinical manifestations of COVID-19, vomiting is a possible "
         "symptom, and some patients experience nausea and vomiting as the first clinical manifestation of the "
         "disease.", [
            c("In COVID-19, gastrointestinal symptoms such as vomiting predominate over respiratory symptoms.",
              "role-swap: respiratory vs gastrointestinal predominance"),
            c("Nausea and vomiting show up only late in COVID-19, after the respiratory symptoms.",
              "timing: first manifestation→late"),
            s("Respiratory symptoms dominate COVID-19, yet vomiting can occur and is sometimes the very first sign.",
              "paraphrase: restructured"),
        ]),
    ]),
    (135, [
        ("Vestibular neuritis is an inner ear disorder that causes symptoms such as sudden, severe vertigo, "
         "dizziness, balance problems, nausea, and vomiting.", [
            c("Vestibular neuritis is a middle ear disorder causing sudden, severe vertigo, dizziness and vomiting.",
              "body-site: inner→middle ear"),
            s("Sudden, intense vertigo with dizziness, unsteadiness, nausea and vomiting are symptoms of vestibular "
              "neuritis, an inner ear disorder.", "paraphrase: restructured"),
        ]),
        ("Patients with vestibular neuritis generally suffer from severe vestibular symptoms for one to two days, "
         "followed by a gradual diminution of symptoms and a return to equilibrium.", [
            c("In vestibular neuritis the severe symptoms typically last one to two months before they ease.",
              "duration: days→months"),
            s("The worst of vestibular neuritis usually lasts about 24 to 48 hours before slowly easing.",
              "paraphrase: same quantity in another unit"),
            s("The severe symptoms of vestibular neuritis usually last a day or two and then slowly subside as "
              "balance returns.", "paraphrase: synonyms"),
        ]),
        ("Still, residual imbalance and nonspecific dizziness may persist for months.", [
            c("Any leftover imbalance and dizziness clears within a few hours.", "duration: months→hours"),
            s("Some unsteadiness and vague dizziness can linger for months afterwards.", "paraphrase: hedged"),
        ]),
    ]),
    (136, [
        ("Mild symptomatic hemorrhoid disease can be managed with adequate fluid and fiber intake, warm sitz baths to "
         "relieve discomfort, avoidance of prolonged straining, regular exercise, and avoidance of medications that "
         "can cause constipation.", [
            c("Mild hemorrhoid disease can be managed by cutting down on fibre and fluids, warm sitz baths and "
              "regular exercise.", "direction: adequate→reduced fibre and fluid"),
            s("For mild hemorrhoids, plenty of fluid and fibre, warm sitz baths, regular exercise, avoiding long "
              "periods of straining and avoiding constipating medicines can help.", "paraphrase: synonyms"),
        ]),
        ("Over-the-counter topical corticosteroids and anesthetics for the symptomatic relief of hemorrhoids are also "
         "available.", [
            c("Topical corticosteroids and anaesthetics for hemorrhoid relief are only available on prescription.",
              "access: over the counter→prescription only"),
            s("Steroid and numbing creams that ease hemorrhoid symptoms can be bought over the counter.",
              "paraphrase: synonyms"),
        ]),
        ("However, these are only intended for intermittent short-term use.", [
            c("These are intended for continuous long-term use.", "duration: intermittent short-term→continuous "
              "long-term"),
            s("These are meant to be used now and then, for brief periods only.", "paraphrase: synonyms"),
        ]),
    ]),
    (137, [
        ("According to the American Heart Association, measuring your blood pressure twice a day, in the morning and "
         "late afternoon, is recommended.", [
            c("The American Heart Association recommends measuring your blood pressure once a week.",
              "dosing-frequency: twice a day→once a week"),
            s("A morning blood pressure reading is part of what the American Heart Association recommends.",
              "paraphrase: compatible subset"),
            s("The American Heart Association advises checking blood pressure two times daily, in the morning and "
              "in the late afternoon.", "paraphrase: synonyms"),
        ]),
        ("It's crucial to take two readings, one minute apart, and record the results.", [
            c("Take two readings about ten minutes apart and write down the results.", "quantity: 1 min→10 min"),
            c("A single reading is enough, and there is no need to write it down.",
              "negation: two recorded readings→one unrecorded"),
            s("Record two readings taken 60 seconds apart.", "paraphrase: same quantity in another unit"),
        ]),
        ("It's advisable to measure your blood pressure after resting for at least five minutes, avoiding smoking, "
         "drinking caffeinated beverages, or exercising 30 minutes before taking the measurement.", [
            c("A short burst of exercise in the half hour before measuring your blood pressure is advisable.",
              "action: avoid→do exercise"),
            c("Measure your blood pressure straight after activity, before you have had any rest.",
              "timing: after resting→before resting"),
            s("Rest for five minutes or more first, and skip smoking, caffeine and exercise for the half hour "
              "beforehand.", "paraphrase: same quantity in another unit"),
        ]),
        ("When measuring your blood pressure, sit with your back straight and supported, your arm resting on a flat "
         "surface, and your upper arm at heart level.", [
            c("When measuring your blood pressure, keep your upper arm well below heart level.",
              "body-site: at heart level→below"),
            s("Sit upright with your back supported, rest your arm on a flat surface and keep your upper arm level "
              "with your heart.", "paraphrase: restructured"),
        ]),
        ("It's also important to avoid taking the measurement over your clothes", [
            c("It is best to take the measurement over your clothes.", "action: avoid→prefer"),
            s("Putting the cuff over clothing should be avoided when you take the reading.",
              "paraphrase: restructured"),
        ]),
    ]),
    (138, [
        ("Patients with group A Streptococcus often respond rapidly to antibiotics and feel better 24 hours after "
         "starting the antibiotics.", [
            c("Patients with group A Streptococcus usually respond slowly to antibiotics, taking about a week to feel "
              "better.", "timing: rapid→slow response"),
            c("Patients with group A Streptococcus do not usually feel better until the whole antibiotic course is "
              "finished.",
              "negation: better in 24 hours→not until course ends"),
            s("People with group A strep often feel better a day after starting antibiotics.",
              "paraphrase: same quantity in another unit"),
        ]),
        ("It is essential to take the whole course of antibiotics as instructed, even if you feel better, to prevent "
         "future complications, including a systemic disease that can affect your heart.", [
            c("Once you feel better you can stop the antibiotics early, since finishing the course makes little "
              "difference.", "action: complete course→stop early"),
            s("Finishing the full antibiotic course, even after feeling better, is essential to prevent "
              "complications such as a systemic illness affecting the heart.", "paraphrase: synonyms"),
        ]),
    ]),
    (139, [
        ("Bacterial conjunctivitis typically results in a red or pink eye with yellow, green or white discharge that "
         "can cause the eyelids to stick together in the morning.", [
            c("Bacterial conjunctivitis typically produces a clear, watery discharge.",
              "attribute: coloured→clear watery discharge"),
            s("With bacterial conjunctivitis the eye is usually red or pink, with yellow, green or white discharge "
              "that may glue the lids together in the morning.", "paraphrase: synonyms"),
        ]),
        ("The eye is not usually itchy but the discharge is prominent.", [
            c("The eye is usually itchy, and the discharge is prominent.", "negation-dropped: not itchy→itchy"),
            s("Itching is uncommon, but there is a lot of discharge.", "paraphrase: negation kept in other words"),
        ]),
        ("In viral infections, the eye is also red or pink with minor itching.", [
            c("In viral infections, the eye is red or pink with severe itching.", "severity: minor→severe"),
            s("Viral infections also make the eye red or pink, with only mild itching.", "paraphrase: synonyms"),
        ]),
        ("Vision is usually not affected in any of the cases.", [
            c("Vision is usually impaired in all of these cases.", "negation-dropped: not affected→impaired"),
            s("In all of these cases, eyesight typically stays normal.", "paraphrase: negation kept in other words"),
        ]),
        ("Allergic conjunctivitis is characterized by a pink itchy eye with watery discharge and may also be "
         "accompanied by a runny or congested nose.", [
            c("Allergic conjunctivitis causes a pink eye that does not itch, with watery discharge.",
              "negation: itchy→not itchy"),
            s("A pink, itchy eye with watery discharge, sometimes with a runny or blocked nose, is typical of "
              "allergic conjunctivitis.", "paraphrase: restructured"),
        ]),
    ]),
    (140, [
        ("It comes in tablet form with dosages of 25mg, 50mg, and 100mg.", [
            c("Losartan comes as 250 mg, 500 mg and 1000 mg tablets.", "quantity: 25/50/100 mg→250/500/1000 mg"),
            s("Losartan is available as a 100 mg tablet.", "paraphrase: compatible subset"),
            s("Tablet strengths are 25 mg, 50 mg and 0.1 g.", "paraphrase: same quantity in another unit"),
        ]),
        ("Unlike other blood pressure medications that require multiple doses throughout the day, Losartan is usually "
         "taken once a day, at the recommended dosage prescribed by your healthcare provider.", [
            c("Losartan usually has to be taken three times a day, spread across the day.",
              "dosing-frequency: once a day→three times a day"),
            s("Losartan is normally a once-daily medicine, taken at the dose your healthcare provider prescribes.",
              "paraphrase: synonyms"),
        ]),
        ("Even if your prescription consists of two pills, it is important to only take them once a day unless "
         "instructed otherwise.", [
            c("If your prescription consists of two pills, take one in the morning and one in the evening.",
              "dosing-frequency: once a day→split twice a day"),
            s("Unless told otherwise, a two-pill prescription should still be taken once daily.",
              "paraphrase: restructured"),
        ]),
        ("If you miss a dose, do not take two doses at once.", [
            c("If you miss a dose, make up for it by taking two doses together next time.",
              "negation-dropped: do not double→double up"),
            s("After a missed dose, avoid doubling up.", "paraphrase: negation kept in other words"),
        ]),
    ]),
    (141, [
        ("Purulent eye discharge is highly suggestive of bacterial infection.", [
            c("Purulent eye discharge strongly suggests a viral infection.", "cause: bacterial→viral"),
            s("Pus-like discharge from the eye points strongly to a bacterial infection.", "paraphrase: synonyms"),
        ]),
        ("The most common type of eye discharge due to viral infections is a watery or serous.", [
            c("Viral eye infections most commonly produce a thick, purulent discharge.",
              "attribute: watery→purulent discharge"),
            s("With viral infections, eye discharge is usually watery or serous.", "paraphrase: restructured"),
        ]),
        ("If you have a purulent eye discharge, it is advisable to contact your healthcare provider for diagnosis and "
         "treatment.", [
            c("A purulent eye discharge is best waited out at home rather than seen by a healthcare provider.",
              "action: contact provider→wait at home"),
            s("Anyone with pus-like eye discharge should get in touch with their healthcare provider to be diagnosed "
              "and treated.", "paraphrase: synonyms"),
        ]),
    ]),
    (142, [
        ("The vagina naturally contains populations of yeast, such as candida, and bacteria, such as lactobacillus, "
         "that prevent yeast overgrowth.", [
            c("Lactobacillus bacteria in the vagina promote yeast overgrowth.", "direction: prevent→promote"),
            s("Bacteria such as lactobacillus, living naturally in the vagina alongside yeasts like candida, keep "
              "yeast from overgrowing.", "paraphrase: restructured"),
        ]),
        ("Using antibiotics such as Bactrim will treat the infectious bacteria, but it could coincidentally damage the "
         "lactobacillus population, resulting in yeast overgrowth and, therefore, a vaginal yeast infection.", [
            c("By boosting the lactobacillus population, antibiotics such as Bactrim protect against vaginal yeast "
              "infections.", "direction: damage→boost lactobacillus"),
            c("Antibiotics such as Bactrim do not affect the lactobacillus population.",
              "negation: could damage→do not affect"),
            s("While treating the infection, Bactrim may knock back protective lactobacilli, which can let yeast "
              "overgrow and cause a vaginal yeast infection.", "paraphrase: hedged"),
        ]),
    ]),
    (143, [
        ("Hearing loss can occur due to ear infections affecting any part of the ear.", [
            c("Hearing loss from an ear infection occurs only when the inner ear is affected.",
              "scope: any part→inner ear only"),
            s("An infection in any part of the ear may lead to hearing loss.", "paraphrase: restructured"),
        ]),
        ("If you experience sudden hearing loss, seeking medical attention promptly for diagnosis and treatment is "
         "crucial.", [
            c("Sudden hearing loss can safely wait a few weeks before you see a doctor.",
              "urgency: prompt→can wait weeks"),
            s("Sudden hearing loss calls for prompt medical assessment and treatment.", "paraphrase: restructured"),
        ]),
    ]),
    (144, [
        ("Using Sertraline (Zoloft) together with Ondansetron (Zofran) can increase the risk of a rare but serious "
         "condition called serotonin syndrome, which may include symptoms such as confusion, hallucination, seizure, "
         "extreme changes in blood pressure, increased heart rate, fever, and more.", [
            c("Combining sertraline with ondansetron lowers the risk of serotonin syndrome.",
              "direction: increase→lower risk"),
            c("Serotonin syndrome, which sertraline with ondansetron can bring on, is a common condition.",
              "frequency: rare→common"),
            s("Taking Zoloft with Zofran may raise the risk of serotonin syndrome, an uncommon but serious condition.",
              "paraphrase: synonyms"),
        ]),
        ("Using Sertraline (Zoloft) with Ondansetron (Zofran) can also increase the risk of an infrequent but serious "
         "condition of an irregular heart rhythm.", [
            c("An irregular heart rhythm is a frequent consequence of using sertraline with ondansetron.",
              "frequency: infrequent→frequent"),
            s("The sertraline and ondansetron combination can also raise the risk of an irregular heart rhythm, "
              "which is rare but serious.", "paraphrase: synonyms"),
        ]),
        ("Due to these severe possible drug interactions, you should consult your healthcare provider about possible "
         "alternatives, dosage adjustments, and monitoring of side effects before using these drugs together", [
            c("Because the interactions are minor, these drugs can be used together without asking your healthcare "
              "provider.", "severity: severe→minor"),
            s("Given the serious interactions, talk to your healthcare provider about alternatives, dose changes and "
              "side-effect monitoring before combining these drugs.", "paraphrase: synonyms"),
        ]),
    ]),
    (145, [
        ("Taking non-steroidal anti-inflammatory drugs like Ibuprofen (Advil, Ibuprofen, Motrin, Provil) together with "
         "Fioricet is safe, as there are no known interactions between Ibuprofen and the active ingredients of "
         "Fioricet: Butalbital, Acetaminophen, and caffeine.", [
            c("Taking ibuprofen together with Fioricet is dangerous because of a known interaction with butalbital.",
              "safety: safe→dangerous"),
            s("Ibuprofen can safely be taken with Fioricet; it has no known interactions with butalbital, "
              "acetaminophen or caffeine.", "paraphrase: restructured"),
        ]),
        ("It's important to follow the manufacturer's recommended daily dosage limit and not exceed it.", [
            c("The manufacturer's daily dosage limit can be exceeded when the pain is bad.",
              "conditional: never exceed→exceed if pain is bad"),
            s("Stay within the daily dose limit the manufacturer recommends.", "paraphrase: negation kept in other "
              "words"),
        ]),
    ]),
    (146, [
        ("Treatment of Prostatitis includes antibiotics such as ciprofloxacin (Cipro) or trimethoprim-sulfamethoxazole "
         "(Bactrim).", [
            c("Prostatitis is treated with antivirals such as acyclovir rather than antibiotics like ciprofloxacin.",
              "drug-class: antibiotic→antiviral"),
            c("Antibiotics are not part of the treatment of prostatitis.", "negation: includes antibiotics→not part"),
            s("Antibiotics like Cipro (ciprofloxacin) or Bactrim (trimethoprim-sulfamethoxazole) are part of "
              "prostatitis treatment.", "paraphrase: restructured"),
        ]),
        ("Young men who are sexually active should be treated with antibiotics that cover sexually transmitted "
         "infections as well.", [
            c("Antibiotic cover for sexually transmitted infections is needed only in older men.",
              "population: young sexually active→older men"),
            s("In sexually active young men, the antibiotic chosen should also cover STIs.",
              "paraphrase: restructured"),
        ]),
    ]),
    (147, [
        ("The most common cause of acute diarrhea in healthy individuals is viral infection, also known as viral "
         "gastroenteritis.", [
            c("The most common cause of acute diarrhea in healthy people is a parasitic infection.",
              "cause: viral→parasitic"),
            s("In healthy individuals, acute diarrhea is most often due to viral gastroenteritis.",
              "paraphrase: restructured"),
        ]),
        ("As long as you have diarrhea, you might still be spreading the virus/bacteria and, therefore, contagious, so "
         "take precautions accordingly.", [
            c("You stop being contagious a day after the diarrhea starts, even if it is still going on.",
              "timing: contagious while diarrhea lasts→only first day"),
            c("You are not contagious while you still have diarrhea.",
              "negation: contagious while diarrhea lasts→not contagious"),
            s("You may remain contagious for as long as the diarrhea lasts, so keep taking precautions.",
              "paraphrase: hedged"),
        ]),
        ("Precautions include washing hands with soap and water after using the bathroom, and avoiding cooking and "
         "sharing food with others until the symptoms resolve.", [
            c("Cooking for others and sharing food is fine while symptoms persist, as long as you wash your hands.",
              "action: avoid→allowed"),
            s("Until symptoms clear up, wash your hands with soap and water after the toilet and avoid cooking for "
              "or sharing food with others.", "paraphrase: restructured"),
        ]),
    ]),
    (148, [
        ("Yes, Prednisone is a synthetic drug derived from cortisone.", [
            c("Prednisone is a naturally occurring hormone rather than a synthetic drug.",
              "origin: synthetic→natural"),
            c("Prednisone is not related to cortisone.", "negation: derived from→not related"),
            s("Prednisone is a man-made drug derived from cortisone.", "paraphrase: synonyms"),
        ]),
        ("Prednisone, Cortisone, and Hydrocortisone are corticosteroid medications used to decrease inflammation and "
         "suppress the immune system in cases of overactivity.", [
            c("Prednisone, cortisone and hydrocortisone are corticosteroids used to stimulate the immune system.",
              "direction: suppress→stimulate"),
            s("Corticosteroids such as prednisone, cortisone and hydrocortisone reduce inflammation and dampen an "
              "overactive immune system.", "paraphrase: synonyms"),
        ]),
    ]),
    (149, [
        ("Ringworm is a fungal skin infection that is quite common and can affect almost any part of the body, "
         "including toenails and fingernails.", [
            c("Ringworm is a bacterial skin infection that can affect almost any part of the body.",
              "cause: fungal→bacterial"),
            s("Ringworm, a common fungal infection of the skin, can involve nearly any body part, nails included.",
              "paraphrase: restructured"),
        ]),
        ("Itchiness is more commonly associated with infections of the skin, feet, groin, and scalp, while it is less "
         "common in infections of the palms, nails, and beard.", [
            c("Itching is more common in ringworm of the palms, nails and beard than in infections of the feet, groin "
              "and scalp.", "role-swap: more itchy vs less itchy sites"),
            s("Ringworm of the skin, feet, groin and scalp itches more often, whereas palm, nail and beard infections "
              "itch less often.", "paraphrase: both antonyms kept"),
        ]),
    ]),
    (150, [
        ("Fluticasone is a type of Corticosteroid that helps reduce inflammation and constrict blood vessels.", [
            c("Fluticasone is a corticosteroid that widens blood vessels.", "direction: constrict→widen"),
            s("As a corticosteroid, fluticasone reduces inflammation and narrows blood vessels.",
              "paraphrase: synonyms"),
        ]),
        ("While antihistamines have some anti-inflammatory effects, they are not considered anti-inflammatory drugs "
         "like corticosteroids or NSAIDs.", [
            c("Antihistamines are classed as anti-inflammatory drugs in the same way as corticosteroids and NSAIDs.",
              "negation-dropped: not considered→classed as"),
            s("Antihistamines have some anti-inflammatory action, yet they aren't grouped with corticosteroids or "
              "NSAIDs as anti-inflammatory drugs.", "paraphrase: negation kept"),
        ]),
    ]),
    (151, [
        ("Singulair (montelukast) is a prescribed oral medication.", [
            c("Singulair (montelukast) is an inhaled medication.", "route: oral→inhaled"),
            c("Singulair is not taken by mouth.", "negation: oral→not oral"),
            s("Montelukast (Singulair) is a prescription medicine taken by mouth.", "paraphrase: synonyms"),
        ]),
        ("Singulair is available as a chewable tablet, oral tablet, or oral granules.", [
            c("Singulair is supplied only as a nasal spray.", "route: oral forms→nasal spray"),
            s("Singulair comes as oral granules, regular tablets or chewable tablets.", "paraphrase: reordered"),
        ]),
    ]),
    (152, [
        ("When infected with hepatitis A, these antibodies are detectable at symptom onset and remain detectable for "
         "approximately three to six months.", [
            c("After hepatitis A infection, these antibodies stay detectable for about three to six years.",
              "duration: months→years"),
            s("In hepatitis A infection these antibodies can be found from the start of symptoms for roughly 3–6 "
              "months.", "paraphrase: synonyms"),
        ]),
        ("A negative or non-reactive result means no IgM antibodies against hepatitis A found in your serum, meaning "
         "the absence of an acute or recent hepatitis A virus infection.", [
            c("A non-reactive hepatitis A IgM result indicates an acute or recent hepatitis A infection.",
              "negation-dropped: absence→presence of infection"),
            s("A non-reactive result means no hepatitis A IgM was found, so there is no acute or recent hepatitis A "
              "infection.", "paraphrase: negation kept"),
        ]),
    ]),
    (153, [
        ("Ambien, also known as Zolpidem, is classified as a federally controlled substance by the Drug Enforcement "
         "Administration (DEA) due to its potential to cause dependence or addiction if abused or misused.", [
            c("The DEA does not classify zolpidem (Ambien) as a controlled substance.",
              "negation: controlled→not controlled"),
            s("The DEA lists zolpidem (Ambien) as a federally controlled substance because misuse can lead to "
              "dependence or addiction.", "paraphrase: restructured"),
        ]),
    ]),
    (154, [
        ("Dry mouth could indicate diabetes type 1 or 2 due to high blood sugar levels.", [
            c("Dry mouth could point to diabetes because of low blood sugar levels.",
              "direction: high→low blood sugar"),
            s("Because of raised blood sugar, dry mouth may be a sign of type 1 or type 2 diabetes.",
              "paraphrase: hedged"),
        ]),
        ("However, it can also occur in individuals without diabetes due to factors such as dehydration, breathing "
         "through the mouth, smoking, alcohol consumption, aging, some medications, autoimmune diseases, and other "
         "medical conditions.", [
            c("Dry mouth occurs only in people with diabetes.", "scope: also non-diabetics→only diabetics"),
            s("People who don't have diabetes can get dry mouth too, for example from dehydration, mouth breathing, "
              "smoking or ageing.", "paraphrase: compatible subset"),
        ]),
        ("If you are experiencing symptoms such as increased thirst, increased urination, and increased appetite with "
         "unintentional weight loss, in addition to dry mouth, it is recommended to consult with your doctor to "
         "determine if diabetes could be the cause.", [
            c("Dry mouth with more thirst, more urination and unintentional weight gain is the pattern that warrants "
              "a diabetes check.", "direction: weight loss→weight gain"),
            s("Seeing a doctor is advised if dry mouth comes with greater thirst, more urination, a bigger appetite "
              "and unplanned weight loss.", "paraphrase: synonyms"),
        ]),
    ]),
    (155, [
        ("When there is a shift in the balance between yeast and other factors in the body, such as the chemical "
         "environment, immune system, and bacteria, it can lead to a yeast infection.", [
            c("Yeast infections come from catching yeast from someone else rather than from a shift in the body's "
              "balance.", "cause: internal imbalance→caught from others"),
            s("A yeast infection can develop when the balance between yeast and things like bacteria, the immune "
              "system or the chemical environment shifts.", "paraphrase: restructured"),
        ]),
        ("Since yeast is a natural part of the body's ecosystem, infections are not considered contagious and are not "
         "referred to as such.", [
            c("Because yeast lives naturally on the body, yeast infections are considered highly contagious.",
              "negation-dropped: not contagious→contagious"),
            s("Yeast belongs to the body's normal ecosystem, so yeast infections are regarded as non-contagious.",
              "paraphrase: negation kept in other words"),
        ]),
    ]),
    (156, [
        ("Oral Diflucan (fluconazole) is one of the available treatments for a yeast infection.", [
            c("Diflucan (fluconazole) is a cream that is applied to treat a yeast infection.", "route: oral→topical"),
            c("Diflucan is not a treatment option for yeast infections.", "negation: treatment option→not an option"),
            s("Fluconazole (Diflucan) taken by mouth is one option for treating a yeast infection.",
              "paraphrase: synonyms"),
        ]),
        ("Other possible treatments include short-course vaginal therapy, which is available as creams, ointments, "
         "tablets, and suppositories.", [
            c("Vaginal therapy for a yeast infection is a long course lasting several months.",
              "duration: short course→months"),
            s("Short courses of vaginal treatment, as creams, ointments, tablets or suppositories, are another "
              "option.", "paraphrase: restructured"),
        ]),
    ]),
    (157, [
        ("Over-the-counter ear drops that contain pain relievers may offer short-term relief but should not be used if "
         "the eardrum has ruptured.", [
            c("Pain-relieving ear drops are especially suitable when the eardrum has ruptured.",
              "conditional: contraindicated→especially suitable"),
            s("Pain-relief ear drops from the pharmacy may help briefly, but they must be avoided if the eardrum is "
              "perforated.", "paraphrase: negation kept in other words"),
        ]),
        ("Placing warm or cold compresses on the ear, keeping the ear dry, and resting upright to reduce pressure in "
         "the middle ear may also help relieve pain.", [
            c("Lying flat, rather than resting upright, reduces pressure in the middle ear.",
              "position: upright→lying flat"),
            s("Warm or cold compresses, keeping the ear dry and resting upright may ease ear pain.",
              "paraphrase: both antonyms kept"),
        ]),
        ("Contact your healthcare provider if symptoms do not improve within 2–3 days or worsen.", [
            c("Only contact your healthcare provider if the symptoms are still there after 2–3 weeks.",
              "duration: days→weeks"),
            s("If ear pain gets worse or hasn't improved in two to three days, contact your healthcare provider.",
              "paraphrase: negation kept"),
        ]),
    ]),
    (158, [
        ("These soft and raised lesions appear around the genital area or anus and are usually not painful, but may "
         "be bothersome in some cases.", [
            c("These soft, raised lesions around the genitals or anus are usually painful.",
              "negation-dropped: not painful→painful"),
            s("The soft, raised lesions around the genitals or anus are generally painless, though they can sometimes "
              "be bothersome.", "paraphrase: negation kept in other words"),
        ]),
        ("HPV is transmitted through contact with infected skin or mucosa and is commonly acquired through sexual "
         "contact.", [
            c("HPV is rarely acquired through sexual contact.", "frequency: commonly→rarely"),
            s("HPV spreads via contact with infected skin or mucous membranes, most often through sex.",
              "paraphrase: synonyms"),
        ]),
        ("While warts are not necessary for transmission, they are highly contagious.", [
            c("Warts are only mildly contagious.", "severity: highly→mildly contagious"),
            c("HPV is passed on only when visible warts are present.", "conditional: not necessary→required"),
            s("HPV can spread even without warts, but warts themselves are very contagious.",
              "paraphrase: negation kept in other words"),
        ]),
    ]),
    (159, [
        ("Once an anxiety attack is triggered, a generalized systemic response is initialized through the body's "
         "autonomous sympathetic nervous system, known as the \"fight or flight\" response.", [
            c("Once an anxiety attack is triggered, the parasympathetic \"rest and digest\" system drives the body's "
              "response.", "role: sympathetic→parasympathetic"),
            s("When an anxiety attack starts, the sympathetic nervous system sets off a body-wide 'fight or flight' "
              "response.", "paraphrase: synonyms"),
        ]),
        ("This physical response is mediated through stress hormones like epinephrine (also known as adrenaline) and "
         "cortisol, which affect many systems in the body, including the cardiovascular, respiratory, and "
         "gastrointestinal systems, as well as the skin, muscles, and eyes.", [
            c("The stress hormones behind this response, adrenaline and cortisol, act on the cardiovascular system "
              "alone.", "scope: many systems→one system"),
            s("Stress hormones such as adrenaline and cortisol drive this response and act on many body systems, "
              "from the heart and lungs to the gut, skin, muscles and eyes.", "paraphrase: synonyms"),
        ]),
    ]),
    (160, [
        ("It is normal for an adult to have a pulse rate of 60-100 beats per minute (bpm).", [
            c("A normal adult pulse rate is 100-140 beats per minute.", "quantity: 60-100→100-140 bpm"),
            s("A resting pulse of 72 beats per minute is normal for an adult.", "paraphrase: compatible instance"),
            s("For adults, a pulse of 60 to 100 bpm is normal.", "paraphrase: restructured"),
        ]),
        ("If the pulse rate falls below 60 bpm, it is known as bradycardia (low pulse).", [
            c("Bradycardia means a pulse rate above 100 bpm.", "direction: below 60→above 100"),
            s("In an adult, a pulse of 55 bpm counts as bradycardia.", "paraphrase: compatible instance"),
            s("Bradycardia, or a low pulse, is a rate under 60 beats per minute.", "paraphrase: synonyms"),
        ]),
        ("Bradycardia can be a normal physiological response in healthy individuals during sleep, endurance "
         "athletes, and older patients.", [
            c("Bradycardia in endurance athletes or during sleep is always a sign of disease.",
              "safety: can be normal→always disease"),
            s("A slow heart rate can be normal in healthy people while they sleep, in endurance athletes and in "
              "older people.", "paraphrase: synonyms"),
        ]),
        ("Certain drugs like calcium channel blockers, lithium, opioids, and beta blockers can also cause "
         "bradycardia.", [
            c("Beta blockers and calcium channel blockers tend to speed up the heart rather than slow it.",
              "direction: slow→speed up heart"),
            c("Opioids and lithium do not cause bradycardia.", "negation: can cause→do not cause"),
            s("Bradycardia can be caused by medicines including beta blockers, calcium channel blockers, opioids and "
              "lithium.", "paraphrase: restructured"),
        ]),
        ("Once the underlying cause is treated or the causing drug is stopped, the bradycardia usually resolves.", [
            c("Bradycardia usually persists even after its cause is treated or the drug responsible is stopped.",
              "outcome: resolves→persists"),
            s("Treating the cause or stopping the responsible drug usually makes the bradycardia go away.",
              "paraphrase: restructured"),
        ]),
    ]),
    (161, [
        ("Proton pump inhibitors (PPIs) are a class of medications that suppress the production of stomach acid.", [
            c("Proton pump inhibitors boost the production of stomach acid.", "direction: suppress→boost"),
            c("PPIs do not change how much acid the stomach produces.", "negation: suppress→no change"),
            s("PPIs are medicines that reduce how much acid the stomach makes.", "paraphrase: synonyms"),
        ]),
        ("They are also used in combination with certain antibiotics for the eradication of Helicobacter pylori "
         "infection, which is associated with peptic ulcers.", [
            c("PPIs are used instead of antibiotics to eradicate Helicobacter pylori.",
              "action: combined with→instead of antibiotics"),
            s("Together with certain antibiotics, PPIs help eradicate Helicobacter pylori, an infection linked to "
              "peptic ulcers.", "paraphrase: restructured"),
        ]),
    ]),
    (162, [
        ("This compression causes pain in the neck, shoulder, or arm, and may include other neurological issues, "
         "including paresthesia, muscle weakness, and impaired reflexes.", [
            c("This compression causes pain in the lower back and legs.",
              "body-site: neck and arm→lower back and legs"),
            s("Compression of the nerve root leads to neck, shoulder or arm pain and may bring tingling, weakness or "
              "reduced reflexes.", "paraphrase: synonyms"),
        ]),
        ("The onset of symptoms can be sudden or gradual, depending on the cause of the compression.", [
            c("Symptoms of cervical radiculopathy always begin suddenly, whatever the cause.",
              "scope: sudden or gradual→always sudden"),
            s("Depending on what is compressing the nerve, symptoms may come on abruptly or slowly.",
              "paraphrase: both antonyms kept"),
        ]),
        ("Diagnosis of cervical radiculopathy is based on clinical presentation, and imaging with MRI is the preferred "
         "test to identify the underlying cause.", [
            c("A plain X-ray, rather than MRI, is the preferred test to find the cause of cervical radiculopathy.",
              "priority: MRI preferred→X-ray preferred"),
            s("Cervical radiculopathy is diagnosed clinically, with MRI the preferred scan for finding the cause.",
              "paraphrase: restructured"),
        ]),
    ]),
    (163, [
        ("Valtrex is the brand name of the generic drug Valacyclovir, which is an oral anti-viral drug that works by "
         "slowing the growth and spread of viruses to help the body fight the infection.", [
            c("Valacyclovir is an oral antibiotic that works by killing bacteria.", "drug-class: antiviral→antibiotic"),
            s("Valacyclovir, sold as Valtrex, is an antiviral taken by mouth that slows how fast viruses grow and "
              "spread.", "paraphrase: synonyms"),
        ]),
        ("Valacyclovir (Valtrex) is available only with a prescription and should be taken as instructed by the "
         "doctor.", [
            c("Valacyclovir (Valtrex) can be bought over the counter.", "access: prescription only→over the counter"),
            c("No prescription is needed to get valacyclovir.", "negation: prescription only→no prescription needed"),
            s("You need a prescription for Valtrex (valacyclovir), and it should be taken as the doctor instructs.",
              "paraphrase: restructured"),
        ]),
    ]),
    (165, [
        ("The least potent topical steroid is hydrocortisone 0.5% - 1%, available over-the-counter.", [
            c("Hydrocortisone 0.5%–1% is the most potent topical steroid.", "direction: least→most potent"),
            s("Hydrocortisone at 0.5–1%, the weakest topical steroid, can be bought without a prescription.",
              "paraphrase: synonyms"),
        ]),
        ("Low-strength topical steroids are used for areas with thin skin, such as the eyelids and genitals, whereas "
         "high-potency steroids are helpful for thicker areas of skin, like the palms and soles.", [
            c("High-potency steroids are used on thin skin such as the eyelids and genitals, while low-strength ones "
              "suit the palms and soles.", "role-swap: low vs high potency sites"),
            s("A low-strength steroid is the kind to use on the eyelids.", "paraphrase: compatible subset"),
            s("Thin-skinned areas like the eyelids and genitals call for weak topical steroids, and thick skin such as "
              "the palms and soles for strong ones.", "paraphrase: both antonyms kept"),
        ]),
        ("It is essential to only use a topical steroid for the instructed amount of time, as prolonged use can "
         "increase the risk of adverse effects.", [
            c("Prolonged use of a topical steroid reduces the risk of adverse effects.", "direction: increase→reduce"),
            c("There is no limit on how long a topical steroid can safely be used.",
              "negation: instructed time only→no limit"),
            s("Use a topical steroid only for as long as instructed, because longer use raises the risk of side "
              "effects.", "paraphrase: synonyms"),
        ]),
    ]),
    (166, [
        ("Amoxicillin with Clavulanic acid (Augmentin) is a prescription antibiotic drug used to treat many different "
         "infections caused by bacteria.", [
            c("Augmentin is an antiviral drug used against viral infections.", "drug-class: antibiotic→antiviral"),
            s("Augmentin (amoxicillin–clavulanic acid) is a prescription antibiotic for a wide range of bacterial "
              "infections.", "paraphrase: synonyms"),
        ]),
        ("This drug consists of Amoxicillin, which is a penicillin antibiotic that fights against bacteria, and "
         "Clavulanic acid, which is a beta-lactamase inhibitor that helps to treat and prevent certain bacteria "
         "resistance to Amoxicillin.", [
            c("In this drug, amoxicillin is the beta-lactamase inhibitor and clavulanic acid is the penicillin "
              "antibiotic.", "role-swap: antibiotic vs beta-lactamase inhibitor"),
            s("The drug combines the penicillin antibiotic amoxicillin with clavulanic acid, a beta-lactamase "
              "inhibitor that counters bacterial resistance to amoxicillin.", "paraphrase: restructured"),
        ]),
    ]),
    (167, [
        ("Inflammation of the eyelid margins, known as blepharitis, is a common eye condition that is not "
         "contagious.", [
            c("Blepharitis is a rare eye condition.", "frequency: common→rare"),
            c("Blepharitis, inflammation of the eyelid margins, spreads easily from person to person.",
              "negation-dropped: not contagious→spreads easily"),
            s("Blepharitis, an inflammation of the eyelid edges, is common and can't be passed on to others.",
              "paraphrase: negation kept"),
        ]),
        ("The primary treatment for blepharitis is good eyelid hygiene, which includes warm compresses, eyelid "
         "massages, and washing.", [
            c("The primary treatment for blepharitis is antibiotics, with eyelid hygiene kept as a last resort.",
              "priority: first-line hygiene→last resort"),
            s("Eyelid hygiene, with warm compresses, lid massage and washing, is the main treatment for blepharitis.",
              "paraphrase: synonyms"),
        ]),
        ("If symptoms are severe, persist, or worsen, your primary healthcare provider may prescribe antibiotics or "
         "refer you to an ophthalmologist.", [
            c("Antibiotics are prescribed for blepharitis when symptoms are mild and brief.",
              "conditional: severe or persistent→mild and brief"),
            s("For severe, persistent or worsening symptoms, a primary care provider might give antibiotics or make a "
              "referral to an eye specialist.", "paraphrase: synonyms"),
        ]),
    ]),
    (168, [
        ("Cefdinir is only available with a prescription and is taken by mouth.", [
            c("Cefdinir is given by injection.", "route: by mouth→injection"),
            s("Cefdinir is an oral, prescription-only medicine.", "paraphrase: restructured"),
        ]),
        ("Antacids containing aluminum or magnesium and iron supplements can interfere with the absorption of "
         "cefdinir.", [
            c("Aluminium or magnesium antacids and iron supplements enhance the absorption of cefdinir.",
              "direction: interfere→enhance"),
            c("Iron supplements do not affect how cefdinir is absorbed.", "negation: interfere→do not affect"),
            s("Iron supplements and antacids with aluminium or magnesium may reduce how well cefdinir is absorbed.",
              "paraphrase: synonyms"),
        ]),
        ("To prevent this interaction, take these medications at least 2 hours before or after cefdinir.", [
            c("To prevent this interaction, take these medications at the same time as cefdinir.",
              "timing: 2 hours apart→same time"),
            c("A 15-minute gap between these medications and cefdinir is enough to prevent the interaction.",
              "quantity: at least 2 hours→15 minutes"),
            s("Separate these medicines from cefdinir by two hours or more, either before or after.",
              "paraphrase: synonyms"),
            s("Taking these medications 120 minutes or more before cefdinir avoids the interaction.",
              "paraphrase: compatible subset, same quantity in another unit"),
        ]),
    ]),
    (169, [
        ("It is effective against bacteria and fungi.", [
            c("It is effective against bacteria, but fungi resist it.", "scope: bacteria and fungi→bacteria only"),
            s("It acts against both fungi and bacteria.", "paraphrase: reordered"),
        ]),
        ("Over-the-counter chlorhexidine topical antiseptics are used for the sterilization of skin before surgery, "
         "oral care, wound cleaning, and as an antiseptic hand rinse.", [
            c("Chlorhexidine antiseptics are used to sterilise the skin after surgery rather than before it.",
              "timing: before→after surgery"),
            s("Non-prescription chlorhexidine antiseptics are used to sterilise skin before an operation, for oral "
              "care, to clean wounds and as a hand rinse.", "paraphrase: synonyms"),
        ]),
        ("Chlorhexidine can also be prescribed as an oral rinse for the treatment of gingivitis (gum inflammation).", [
            s("A prescription chlorhexidine mouth rinse can be used to treat gum inflammation (gingivitis).",
              "paraphrase: synonyms"),
        ]),
    ]),
    (170, [
        ("The most common cause of sciatica is compression of the sciatic nerve root by a herniated disc in the "
         "spine.", [
            c("A herniated disc is a rare cause of sciatica.", "frequency: most common→rare"),
            s("Sciatica is most commonly due to a herniated spinal disc pressing on the sciatic nerve root.",
              "paraphrase: restructured"),
        ]),
        ("Classically, the pain affects one side of the body and radiates from the buttock down the back of the leg to "
         "below the knee.", [
            c("Classically, sciatic pain affects both sides of the body.", "side: one side→both sides"),
            s("Typically the pain is one-sided, running from the buttock down the back of the leg past the knee.",
              "paraphrase: synonyms"),
        ]),
        ("Symptoms may worsen with twisting, bending, sneezing, or coughing.", [
            c("Twisting, bending, sneezing or coughing tend to ease the symptoms.", "direction: worsen→ease"),
            c("Coughing and sneezing have no effect on the symptoms.", "negation: worsen→no effect"),
            s("Coughing, sneezing, bending or twisting can make the symptoms worse.", "paraphrase: reordered"),
        ]),
        ("Diagnostic imaging studies may be recommended if symptoms persist for >6 weeks or weakness or numbness is "
         "experienced.", [
            c("Imaging may be recommended once symptoms have persisted for more than 6 months.",
              "quantity: 6 weeks→6 months"),
            s("If symptoms last longer than six weeks, or there is weakness or numbness, imaging may be advised.",
              "paraphrase: synonyms"),
        ]),
        ("Mild sciatica usually resolves in a few weeks.", [
            c("Mild sciatica usually takes several years to resolve.", "duration: weeks→years"),
            s("Mild sciatica generally clears up within a few weeks.", "paraphrase: synonyms"),
        ]),
        ("The following conservative approaches may help relieve pain and speed up recovery: cold or heat packs, "
         "over-the-counter analgesics, physiotherapy, and starting gentle exercise as soon as tolerated.", [
            c("Gentle exercise should be put off until the pain has completely gone.",
              "timing: as soon as tolerated→after pain resolves"),
            s("Starting gentle exercise as soon as it can be tolerated, along with heat or cold packs, can speed "
              "recovery.", "paraphrase: compatible subset"),
        ]),
        ("Seek immediate medical attention for severe pain, numbness, or weakness in both legs or problems "
         "controlling bowel or bladder function.", [
            c("Problems controlling the bladder or bowel with sciatica can wait for a routine appointment.",
              "urgency: immediate→routine"),
            s("Weakness or numbness in both legs, severe pain, or trouble with bladder or bowel control need urgent "
              "medical care.", "paraphrase: reordered"),
        ]),
    ]),
    (171, [
        ("It is crucial to know that lifestyle changes, like weight loss, increased physical activity, reduced sodium "
         "intake, and limiting alcohol consumption, are often recommended as a first step when diagnosed with "
         "hypertension.", [
            c("Increasing salt intake is one of the lifestyle changes recommended as a first step for hypertension.",
              "direction: reduced→increased sodium"),
            c("Lifestyle changes are a last resort in hypertension, tried only after medication has failed.",
              "priority: first step→last resort"),
            s("Losing weight, being more active, cutting down on salt and drinking less alcohol are commonly advised "
              "first for hypertension.", "paraphrase: synonyms"),
        ]),
        ("If these lifestyle changes do not help lower blood pressure, medication may be necessary.", [
            s("Medicines may be needed when lifestyle changes fail to bring blood pressure down.",
              "paraphrase: negation kept in other words"),
        ]),
        ("Your doctor may recommend treatment with ACE inhibitors or ARBs in combination with other drugs like calcium "
         "channel blockers and thiazides.", [
            c("ACE inhibitors or ARBs must never be combined with calcium channel blockers or thiazides.",
              "negation: may combine→never combine"),
            s("ACE inhibitors or ARBs may be prescribed together with other drugs such as thiazides or calcium "
              "channel blockers.", "paraphrase: restructured"),
        ]),
    ]),
    (172, [
        ("In addition, urinalysis can detect numerous substances within the urine, including glucose, nitrite, red "
         "blood cells, white blood cells, and protein.", [
            c("Urinalysis picks up red and white blood cells but is blind to glucose and protein.",
              "scope: includes glucose and protein→excludes them"),
            s("Among the many things urinalysis can detect in urine are protein, glucose, nitrite and red and white "
              "blood cells.", "paraphrase: restructured"),
        ]),
        ("A urine culture is a test to detect and identify bacteria and fungi in the urine.", [
            c("A urine culture measures glucose and protein in the urine rather than identifying bacteria.",
              "role-swap: culture vs urinalysis"),
            s("Urine culture detects and identifies fungi and bacteria in urine.", "paraphrase: reordered"),
        ]),
        ("This is done by adding growth-promoting substances to a urine sample and checking for any multiplication, "
         "indicating a positive result.", [
            c("In a urine culture, any multiplication in the sample indicates a negative result.",
              "outcome: multiplication positive→negative"),
            s("The sample is given growth-promoting substances and checked for multiplication; growth means a "
              "positive result.", "paraphrase: restructured"),
        ]),
    ]),
    (173, [
        ("The most common cause of dysuria in young, sexually active, healthy men is a sexually transmitted infection "
         "(STI).", [
            c("In young, sexually active, healthy men, dysuria is rarely caused by a sexually transmitted infection.",
              "frequency: most common→rare"),
            s("A sexually transmitted infection is the leading cause of painful urination in healthy young men who "
              "are sexually active.", "paraphrase: synonyms"),
        ]),
        ("Epididymitis usually presents with a swollen, painful scrotum, and prostatitis is associated with pain in "
         "the perineum.", [
            c("Prostatitis usually presents with a swollen, painful scrotum, whereas epididymitis causes pain in the "
              "perineum.", "role-swap: epididymitis vs prostatitis"),
            s("Perineal pain goes with prostatitis, while a swollen, painful scrotum is the usual sign of "
              "epididymitis.", "paraphrase: restructured"),
        ]),
        ("The most common STIs are gonorrhoea and chlamydia.", [
            c("Gonorrhoea and chlamydia are among the rarest STIs.", "frequency: most common→rarest"),
            s("Chlamydia and gonorrhea are the commonest STIs.", "paraphrase: reordered"),
        ]),
    ]),
    (174, [
        ("The maximal safe amount of Ibuprofen (Advil, Motrin) for healthy adults is 800 milligrams per dose or 3200 "
         "mg per day (4 maximum doses), and this dose is only safe as a short-term treatment and not for chronic "
         "use.", [
            c("For healthy adults the maximum safe amount of ibuprofen is 8 g per dose.", "quantity: 800 mg→8 g"),
            c("The maximum ibuprofen dose of 3200 mg a day is safe for long-term, chronic use.",
              "duration: short-term→chronic"),
            s("Healthy adults can take at most 0.8 g of ibuprofen per dose, up to 3.2 g a day.",
              "paraphrase: same quantity in another unit"),
            s("The top ibuprofen dose is suitable only as a short-term treatment rather than for chronic use.",
              "paraphrase: negation kept in other words"),
        ]),
        ("It is safest to use the lowest effective dose for the shortest duration of time in order to avoid unwanted "
         "side effects.", [
            c("To avoid side effects, it is safest to use the highest dose for the shortest time.",
              "direction: lowest→highest dose"),
            s("Using the smallest dose that works, for the briefest time, is safest for avoiding side effects.",
              "paraphrase: synonyms"),
        ]),
    ]),
    (175, [
        ("During pregnancy, Methotrexate (Otrexup, Rasuvo, RediTrex) and thalidomide (Contergan, Thalomid) should not "
         "be used to treat ulcerative colitis due to high risks for the developing fetus.", [
            c("Methotrexate and thalidomide are preferred treatments for ulcerative colitis during pregnancy.",
              "safety: contraindicated→preferred"),
            s("Because of high fetal risk, methotrexate and thalidomide are off-limits for ulcerative colitis in "
              "pregnancy.", "paraphrase: negation kept in other words"),
        ]),
        ("Instead, aminosalicylates (sulfasalazine and mesalamine), immunomodulators (azathioprine, cyclosporine "
         "A,6-mercaptopurine), and corticosteroids are potential options.", [
            c("Mesalamine and sulfasalazine have to be stopped in pregnancy because they are unsafe.",
              "safety: potential option→unsafe"),
            s("Potential options include mesalamine or sulfasalazine, azathioprine and corticosteroids.",
              "paraphrase: compatible subset"),
        ]),
        ("However, biological agents like Infliximab, Adalimumab, Vedolizumab, and Ustekinumab are usually avoided "
         "during pregnancy as their safety in pregnancy is not yet established.", [
            c("Biological agents such as infliximab and adalimumab are the first choice in pregnancy because their "
              "safety is well established.", "safety: avoided→first choice"),
            s("Biologics such as vedolizumab or infliximab are generally avoided in pregnancy since their safety "
              "hasn't yet been established.", "paraphrase: negation kept"),
        ]),
    ]),
    (176, [
        ("The average body temperature ranges from 35.3 to 37.7°C (95.5 to 99.9°F), and anything above 37.8°C "
         "(100.0°F) is typically considered a fever.", [
            c("A fever is typically defined as a temperature above 39.5°C.", "quantity: 37.8°C→39.5°C"),
            s("A temperature of 38.5°C would typically be considered a fever.", "paraphrase: compatible instance"),
            s("A temperature over 100.0°F is usually regarded as a fever.", "paraphrase: same quantity in another "
              "unit"),
        ]),
        ("Acetaminophen is usually recommended first due to fewer side effects than NSAIDs, but short-term use of "
         "either drug is safe for healthy individuals without kidney or liver impairment.", [
            c("NSAIDs are usually recommended ahead of acetaminophen because they have fewer side effects.",
              "role-swap: first choice acetaminophen vs NSAIDs"),
            s("Acetaminophen is generally the first choice because it causes fewer side effects than NSAIDs, though "
              "brief use of either is safe in healthy people with normal kidneys and liver.",
              "paraphrase: negation kept in other words"),
        ]),
        ("While viral fevers generally resolve on their own and do not require further treatment, cases of high or "
         "prolonged fever or additional symptoms require medical attention and diagnosis.", [
            c("Viral fevers usually need further treatment before they clear up.",
              "outcome: self-resolving→needs treatment"),
            s("Viral fevers usually settle by themselves, but a high or long-lasting fever, or one with extra "
              "symptoms, needs medical attention.", "paraphrase: synonyms"),
        ]),
    ]),
    (177, [
        ("Folliculitis is most commonly caused by the bacteria Staphylococcus aureus.", [
            c("Folliculitis is most commonly caused by Pseudomonas aeruginosa.", "cause: S. aureus→Pseudomonas"),
            c("Staphylococcus aureus is not a cause of folliculitis.", "negation: most common cause→not a cause"),
            s("Staphylococcus aureus is the most frequent bacterial cause of folliculitis.",
              "paraphrase: restructured"),
        ]),
        ("Additionally, folliculitis can be caused by less common factors such as viruses, fungi, parasites, and "
         "non-infectious diseases.", [
            c("Viruses and fungi are the most common causes of folliculitis.", "frequency: less common→most common"),
            s("Less often, viruses, fungi, parasites or non-infectious diseases cause folliculitis.",
              "paraphrase: restructured"),
        ]),
    ]),
    (178, [
        ("A thin, flexible, lighted tube with a small camera is inserted through your rectum and into your colon.", [
            c("In a colonoscopy, the camera tube is passed through the mouth down into the colon.",
              "body-site: rectum→mouth"),
            s("A slim, bendable tube with a light and a tiny camera is passed through the rectum into the colon.",
              "paraphrase: synonyms"),
        ]),
        ("During this exam, polyps, which are growths that could be cancerous, are detected and evaluated.", [
            c("The polyps found during this exam are always harmless growths.", "safety: could be cancerous→harmless"),
            s("This exam finds and assesses polyps, growths that may be cancerous.", "paraphrase: synonyms"),
        ]),
    ]),
    (179, [
        ("Primary immunodeficiencies are rare genetic conditions where a part of the immune system is missing or not "
         "working properly.", [
            c("Primary immunodeficiencies are common genetic conditions.", "frequency: rare→common"),
            c("Primary immunodeficiencies are acquired during life rather than genetic.",
              "origin: genetic→acquired"),
            s("Primary immunodeficiencies are uncommon inherited conditions in which part of the immune system is "
              "absent or malfunctioning.", "paraphrase: synonyms"),
        ]),
        ("Secondary immunodeficiencies are acquired throughout a person's life and can result from various "
         "causes.", [
            c("Secondary immunodeficiencies are present from birth.", "timing: acquired in life→from birth"),
            s("Secondary immunodeficiencies develop during a person's lifetime and can have many causes.",
              "paraphrase: synonyms"),
        ]),
        ("Malnutrition, burns, pregnancy, stress, asplenia, environmental radiation and toxin exposure, and old age "
         "have also been linked to a weakened immune system and increased infection risk.", [
            c("Old age and malnutrition have been linked to a stronger immune system and lower infection risk.",
              "direction: weakened→stronger"),
            s("A weakened immune system and higher infection risk have been linked to malnutrition, burns, "
              "pregnancy, stress and old age.", "paraphrase: compatible subset"),
        ]),
    ]),
    (180, [
        ("Keratosis pilaris is a skin condition among young adults, where small bumps of excess keratin develop on "
         "your skin, usually on your arms and legs.", [
            c("In keratosis pilaris the bumps usually develop on the face and chest.",
              "body-site: arms and legs→face and chest"),
            s("In keratosis pilaris, small bumps of extra keratin form on the skin, most often on the arms and legs.",
              "paraphrase: synonyms"),
        ]),
        ("Keratosis pilaris typically doesn’t require treatment, and usually fades by age 30.", [
            c("Keratosis pilaris usually gets worse after the age of 30.", "direction: fades→worsens"),
            s("Keratosis pilaris generally needs no treatment and tends to fade by the age of 30.",
              "paraphrase: negation kept"),
        ]),
        ("Possible treatments are aimed at preventing excessive skin dryness, including using mild soaps or soap-free "
         "cleansers and avoiding hot baths or showers.", [
            c("Hot baths and showers are recommended to keep the skin from getting too dry.",
              "action: avoid→recommend hot baths"),
            s("Using gentle soaps or soap-free cleansers and skipping hot baths or showers helps keep the skin from "
              "getting too dry.", "paraphrase: synonyms"),
        ]),
    ]),
    (181, [
        ("Cluster headache is a type of chronic and severe headache that is not life-threatening.", [
            c("Cluster headache is a life-threatening type of headache.", "negation-dropped: not life-threatening→"
              "life-threatening"),
            s("Cluster headache is severe and chronic but poses no threat to life.", "paraphrase: negation kept"),
        ]),
        ("It typically affects one side of the head, usually in or around the eye area, and is commonly described as "
         "a stabbing or sharp pain.", [
            c("It typically affects both sides of the head, around the eyes.", "side: one side→both sides"),
            s("It usually strikes one side of the head, in or around the eye, with a sharp, stabbing quality.",
              "paraphrase: synonyms"),
        ]),
        ("Fortunately, there are effective treatments available that can help make cluster headache attacks shorter, "
         "less frequent, and less severe.", [
            c("There is no effective treatment for cluster headache attacks.", "negation: effective treatments→none"),
            s("Effective treatments can shorten cluster headache attacks and make them milder and less frequent.",
              "paraphrase: synonyms"),
        ]),
    ]),
    (182, [
        ("Non-pharmacological treatments like muscle massage, rest, gentle stretching, and heat therapy can be "
         "helpful.", [
            c("Massage and heat therapy tend to make muscular pain worse.", "direction: help→worsen"),
            s("Massage, rest, gentle stretching and heat can help with muscle pain.", "paraphrase: restructured"),
        ]),
        ("It's important to seek medical attention if you experience severe pain, muscle weakness, numbness, "
         "tingling, or high fever or if the pain lasts for more than a week.", [
            c("Medical attention is only needed if muscular pain lasts for more than three months.",
              "duration: a week→three months"),
            s("Muscle pain lasting longer than seven days, or coming with severe pain, weakness, numbness, tingling "
              "or a high fever, needs medical attention.", "paraphrase: same quantity in another unit"),
        ]),
    ]),
    (183, [
        ("Meningitis is when the tissues surrounding the brain and spinal cord become inflamed, most commonly due to "
         "an infection.", [
            c("Meningitis is most commonly caused by an autoimmune reaction rather than an infection.",
              "cause: infection→autoimmune"),
            s("Meningitis is inflammation of the tissues around the brain and spinal cord, usually because of "
              "infection.", "paraphrase: synonyms"),
        ]),
        ("A diagnosis is made through a lumbar puncture, which evaluates the cerebrospinal fluid (CSF) surrounding the "
         "brain and spinal cord.", [
            c("Meningitis is diagnosed with a blood test, not a lumbar puncture.", "negation: lumbar puncture→not"),
            s("A lumbar puncture, which examines the CSF around the brain and spinal cord, is how the diagnosis is "
              "made.", "paraphrase: restructured"),
        ]),
        ("Immediate treatment is essential and should be based on the cause of the meningitis.", [
            c("Treatment for meningitis can be delayed until the symptoms have lasted several days.",
              "urgency: immediate→delayed"),
            s("Meningitis must be treated right away, with treatment tailored to its cause.", "paraphrase: synonyms"),
        ]),
    ]),
    (184, [
        ("Molecularly speaking, Valacyclovir is a prodrug of acyclovir, which is converted into acyclovir in the "
         "body.", [
            c("Acyclovir is a prodrug that the body converts into valacyclovir.", "role-swap: prodrug vs active drug"),
            c("Valacyclovir is not converted into acyclovir in the body.", "negation: converted→not converted"),
            s("Valacyclovir is turned into acyclovir in the body, making it a prodrug of acyclovir.",
              "paraphrase: restructured"),
        ]),
        ("Among other differences is that Valacyclovir is only available as oral tablets, whereas acyclovir is "
         "available as oral tablets, oral capsules, sublingual tablets, oral suspensions, creams, and injectable "
         "solutions.", [
            c("Valacyclovir comes as creams and injections, whereas acyclovir is only available as oral tablets.",
              "role-swap: forms of valacyclovir vs acyclovir"),
            s("Acyclovir comes in many forms, including creams and injections, while valacyclovir comes only as "
              "tablets taken by mouth.", "paraphrase: both antonyms kept"),
        ]),
        ("In addition, Valacyclovir has a longer duration of action and greater bioavailability compared to "
         "acyclovir.", [
            c("Valacyclovir has lower bioavailability than acyclovir.", "direction: greater→lower bioavailability"),
            s("Compared with acyclovir, valacyclovir acts for longer and has greater bioavailability.",
              "paraphrase: restructured"),
        ]),
        ("Therefore, an advantage of prescribing Valacyclovir is that it can be taken fewer times in a day compared to "
         "acyclovir and still has the same effect.", [
            c("Valacyclovir has to be taken more times a day than acyclovir to have the same effect.",
              "dosing-frequency: fewer→more doses a day"),
            s("Valacyclovir needs fewer daily doses than acyclovir for the same effect.", "paraphrase: synonyms"),
        ]),
    ]),
    (185, [
        ("It is crucial to seek immediate medical attention if you experience vertigo or dizziness with any of the "
         "following symptoms: constant dizziness that doesn't go away and isn't related to head movement, difficulty "
         "speaking or understanding others speaking, weakness of face or extremities, confusion, slurred speech, "
         "inability to stand, sudden and severe headache or neck pain, difficulty swallowing, or double vision.", [
            c("Vertigo with slurred speech or double vision can be watched at home for a few weeks before seeking "
              "care.", "urgency: immediate→wait weeks"),
            s("Dizziness accompanied by slurred speech, facial weakness or double vision needs emergency medical "
              "care.", "paraphrase: compatible subset"),
        ]),
    ]),
    (186, [
        ("Antibiotic treatment is most effective in preventing the progression of Lyme disease when started in the "
         "early stage, which is usually characterized by an expanding circular red rash and flu-like illness.", [
            c("Antibiotics work best against Lyme disease when they are started in the late stage.",
              "timing: early→late stage"),
            c("Starting antibiotics early does not change how Lyme disease progresses.",
              "negation: most effective early→no effect"),
            s("Starting antibiotics early, when there is typically an expanding red circular rash and a flu-like "
              "illness, best prevents Lyme disease from progressing.", "paraphrase: restructured"),
        ]),
        ("Within 20 days of starting treatment, most patients experience a complete resolution of signs and "
         "symptoms.", [
            c("Most patients need about 20 months of treatment before their symptoms resolve.",
              "quantity: 20 days→20 months"),
            s("For most patients, signs and symptoms have fully resolved within three weeks of starting treatment.",
              "paraphrase: compatible bound in another unit"),
        ]),
        ("These symptoms may last for over six months after treatment and are known as post-treatment Lyme disease "
         "syndrome (PTLDS).", [
            c("Post-treatment Lyme disease syndrome clears within a few days of finishing treatment.",
              "duration: over six months→a few days"),
            s("Post-treatment Lyme disease syndrome refers to symptoms that can persist more than half a year after "
              "treatment.", "paraphrase: same quantity in another unit"),
        ]),
    ]),
    (187, [
        ("Keflex (Cephalexin) can be taken with or without food, but taking it with food may reduce the risk of "
         "nausea and vomiting, which are possible side effects.", [
            c("Keflex has to be taken on an empty stomach.", "food: with or without→empty stomach only"),
            c("Taking cephalexin with food may raise the risk of nausea and vomiting.",
              "direction: reduce→raise risk"),
            c("Keflex should not be taken with food.", "negation: with or without food→not with food"),
            s("Cephalexin can be taken with a meal.", "paraphrase: compatible subset"),
            s("Having food with Keflex may lower the chance of nausea and vomiting.", "paraphrase: synonyms"),
        ]),
    ]),
    (188, [
        ("If your heart rate is over 100 bpm, it's considered fast and is called tachycardia.", [
            c("A heart rate over 100 bpm is called bradycardia.", "role-swap: tachycardia vs bradycardia"),
            s("A heart rate above 100 beats per minute counts as fast and is termed tachycardia.",
              "paraphrase: synonyms"),
        ]),
        ("While studies have shown a relationship between being overweight and having sympathetic overactivity "
         "(which can cause high blood pressure and tachycardia), most overweight individuals do not experience sinus "
         "tachycardia.", [
            c("Most overweight people experience sinus tachycardia.", "negation-dropped: do not experience→experience"),
            s("Only a minority of overweight people have sinus tachycardia.",
              "paraphrase: negation kept in other words"),
        ]),
        ("If you experience tachycardia while at rest for no apparent reason, it's important to see a doctor for "
         "evaluation.", [
            c("A fast heart rate at rest with no obvious cause is harmless and needs no doctor's visit.",
              "negation: see a doctor→no visit needed"),
            s("A fast heart rate at rest without an obvious reason should be checked by a doctor.",
              "paraphrase: synonyms"),
        ]),
    ]),
    (189, [
        ("They provide quick relief, but the effect lasts only 30-60 minutes.", [
            c("They provide quick relief that lasts around 12 hours.", "duration: 30-60 minutes→12 hours"),
            s("Their effect is gone within about an hour.", "paraphrase: compatible bound"),
            s("They act fast, though the effect wears off after half an hour to an hour.",
              "paraphrase: same quantity in another unit"),
        ]),
        ("Over-the-counter H2 receptor antagonists and proton pump inhibitors are also effective in treating "
         "heartburn, with a longer duration of action.", [
            c("Over-the-counter H2 blockers and proton pump inhibitors act for a shorter time.",
              "direction: longer→shorter duration"),
            s("Non-prescription H2 blockers and PPIs also work for heartburn and last longer.",
              "paraphrase: synonyms"),
        ]),
        ("In addition, certain lifestyle changes such as losing weight (if overweight or gained weight recently) and "
         "elevating the head of the bed can also help improve symptoms.", [
            c("Lowering the head of the bed can help improve heartburn.", "direction: elevate→lower"),
            s("Raising the head of the bed and losing weight if overweight can help the symptoms.",
              "paraphrase: synonyms"),
        ]),
    ]),
    (190, [
        ("Acetaminophen (paracetamol) is the least potent but has the safest side effect profile.", [
            c("Paracetamol is the most potent of the three types of pain relief.", "direction: least→most potent"),
            s("Acetaminophen is the weakest option but the safest in terms of side effects.", "paraphrase: synonyms"),
        ]),
        ("NSAIDs are generally more potent but carry a risk of harming the kidneys and other side effects.", [
            c("NSAIDs protect the kidneys.", "direction: harm→protect"),
            s("NSAIDs tend to be stronger, though they can harm the kidneys and have other side effects.",
              "paraphrase: synonyms"),
        ]),
        ("Opioids such as Tramadol (Conzip) and Oxycodone (Oxyado, Oxycontin) are the most potent but carry a "
         "significant risk of addiction, toxicity, and cognitive and respiratory adverse effects.", [
            c("Opioids like tramadol and oxycodone carry a negligible risk of addiction.",
              "severity: significant→negligible"),
            s("Opioids such as oxycodone and tramadol are the strongest, but have a considerable risk of addiction, "
              "toxicity and effects on thinking and breathing.", "paraphrase: synonyms"),
        ]),
    ]),
    (191, [
        ("Herpes simplex virus most commonly appears on the lips and mouth but can form elsewhere on the face, such "
         "as the skin around the mouth, nose, cheeks, and chin.", [
            c("Herpes simplex lesions appear only on the lips and never elsewhere on the face.",
              "negation: elsewhere possible→never elsewhere"),
            c("Herpes simplex most commonly appears on the chin and cheeks rather than the lips.",
              "frequency: lips most common→chin and cheeks"),
            s("Although it usually appears on the lips and mouth, herpes simplex can also show up on the chin, "
              "cheeks or nose.", "paraphrase: restructured"),
        ]),
    ]),
    (192, [
        ("Chlamydia is not a self-limited infection – thus, it does not cure itself, and it is essential to treat it "
         "properly to prevent further complications and decrease the risk of transmission to others.", [
            c("Chlamydia usually clears up on its own without treatment.", "negation-dropped: does not cure itself→"
              "clears up on its own"),
            s("Chlamydia won't go away by itself, so proper treatment is essential to avoid complications and reduce "
              "spread to others.", "paraphrase: negation kept"),
        ]),
        ("Treatment for chlamydia includes an antibiotic course and should be offered for your sexual partners as "
         "well.", [
            c("Only the person diagnosed with chlamydia needs antibiotics; sexual partners are left untreated.",
              "population: patient and partners→patient only"),
            s("Chlamydia is treated with a course of antibiotics, which sexual partners should be offered too.",
              "paraphrase: restructured"),
        ]),
    ]),
    (193, [
        ("Corneal abrasions are usually accompanied by eye pain, sensitivity to light, redness of the eye, and a "
         "feeling of something being in the eye.", [
            c("Corneal abrasions are usually painless.", "symptom: painful→painless"),
            s("Eye pain, light sensitivity, redness and a feeling that something is in the eye usually come with a "
              "corneal abrasion.", "paraphrase: restructured"),
        ]),
        ("There should be no discharge other than tears.", [
            c("Some pus-like discharge besides tears is normal.", "negation-dropped: no discharge→discharge normal"),
            s("Tears should be the only discharge.", "paraphrase: negation kept in other words"),
        ]),
        ("If there is discharge along with the above-mentioned symptoms, it could indicate a corneal infection which "
         "needs immediate medical attention from a healthcare provider.", [
            c("Discharge along with these symptoms points to a corneal infection that can safely wait for a routine "
              "appointment.", "urgency: immediate→routine"),
            s("Discharge together with these symptoms may signal a corneal infection needing urgent care.",
              "paraphrase: hedged"),
        ]),
    ]),
    (194, [
        ("The drug of choice is often amoxicillin, which is a broad-spectrum antibiotic that effectively targets the "
         "common pathogens of an otitis media infection.", [
            c("Amoxicillin is usually kept as a last-resort antibiotic for otitis media.",
              "priority: drug of choice→last resort"),
            s("Amoxicillin, a broad-spectrum antibiotic effective against the usual otitis media pathogens, is often "
              "the first choice.", "paraphrase: synonyms"),
        ]),
        ("In case of an allergy to penicillin or if amoxicillin proves ineffective, other antibiotics from the "
         "cephalosporin or macrolide class may be prescribed.", [
            c("Patients with a penicillin allergy should be given amoxicillin.",
              "conditional: allergy→alternative reversed"),
            s("A cephalosporin or a macrolide may be used if amoxicillin fails or the patient is allergic to "
              "penicillin.", "paraphrase: restructured"),
        ]),
        ("In some cases, a wait-and-see approach is taken as the symptoms can resolve on their own.", [
            c("The symptoms of a middle ear infection never resolve without antibiotics.",
              "negation: can resolve→never resolve"),
            s("Because symptoms may clear up by themselves, doctors sometimes wait and watch.",
              "paraphrase: restructured"),
        ]),
        ("Also, while middle ear infections are common in children, they are considered rare in adults.", [
            c("Middle ear infections are common in adults but rare in children.", "role-swap: children vs adults"),
            s("Adults seldom get middle ear infections.", "paraphrase: compatible subset"),
            s("Middle ear infections occur often in children but seldom in adults.", "paraphrase: both antonyms kept"),
        ]),
    ]),
    (195, [
        ("Some of the most useful and recommended antifungal shampoos, such as Ketoconazole 2% (Nizoral) and "
         "Ciclopirox (Loprox), contain sulfates.", [
            c("Ketoconazole 2% (Nizoral) and ciclopirox (Loprox) shampoos are sulfate-free.",
              "composition: contain sulfates→sulfate-free"),
            s("Nizoral (ketoconazole 2%) and Loprox (ciclopirox), two of the most recommended antifungal shampoos, "
              "have sulfates in them.", "paraphrase: restructured"),
        ]),
        ("Shampoos with antifungal action which are sulfate-free include low dose Ketoconazole (Regenepure, Pura "
         "D'or), Pyrithione Zinc(Vanicream Free & Clear), and Selenium Sulfide (Vichy Dercos).", [
            c("Low-dose ketoconazole shampoos such as Regenepure contain sulfates.",
              "composition: sulfate-free→contains sulfates"),
            s("Pyrithione zinc (Vanicream Free & Clear) is a sulfate-free shampoo with antifungal action.",
              "paraphrase: compatible subset"),
        ]),
    ]),
    (196, [
        ("Bacterial vaginosis is a vaginal infection caused by a bacterial imbalance of the normal bacteria found in "
         "the vagina and is not a sexually transmitted disease.", [
            c("Bacterial vaginosis is a sexually transmitted disease.", "negation-dropped: not an STD→an STD"),
            s("Bacterial vaginosis results from an imbalance of the vagina's normal bacteria and isn't classed as an "
              "STD.", "paraphrase: negation kept"),
        ]),
        ("In bacterial vaginosis, the normal hydrogen peroxide and lactic-acid–producing Lactobacillus species in the "
         "vagina are replaced with a high concentration of anaerobic bacteria.", [
            c("In bacterial vaginosis, Lactobacillus species multiply and crowd out the anaerobic bacteria.",
              "role-swap: Lactobacillus vs anaerobes"),
            s("In BV, anaerobic bacteria at high concentration take the place of the usual Lactobacillus species.",
              "paraphrase: restructured"),
        ]),
    ]),
    (197, [
        ("For acute diarrhea, the drug shouldn't be used for more than 48 hours, and if the diarrhea persists, it is "
         "advisable to contact your healthcare provider for proper diagnosis and treatment.", [
            c("For acute diarrhea, loperamide can be used for up to two weeks.", "duration: 48 hours→two weeks"),
            s("In acute diarrhea, limit the drug to 2 days at most and see a healthcare provider if the diarrhea "
              "continues.", "paraphrase: same quantity in another unit"),
        ]),
        ("Under your doctor's prescription for chronic diarrhea, it is possible to take Loperamide long-term after "
         "considering if the benefit outweighs the possible side effects.", [
            c("Loperamide must never be taken long term, even for chronic diarrhea under a doctor's care.",
              "negation: possible long-term→never long-term"),
            s("With a doctor's prescription, loperamide may be taken long term for chronic diarrhea when the benefit "
              "outweighs the side effects.", "paraphrase: restructured"),
        ]),
    ]),
    (198, [
        ("All brands and generic forms of omeprazole contain the same active ingredient and are considered equally "
         "effective.", [
            c("Brand-name omeprazole is considered more effective than the generic forms.",
              "comparison: equal→brand better"),
            s("Generic and branded omeprazole share the same active ingredient and are regarded as equally "
              "effective.", "paraphrase: synonyms"),
        ]),
        ("If you have difficulty swallowing, Prilosec is available as a granule packet that can be mixed into "
         "water.", [
            c("Prilosec comes only as capsules that must be swallowed whole.",
              "route: granules available→capsules only"),
            s("People who find swallowing hard can use Prilosec granule packets mixed into water.",
              "paraphrase: restructured"),
        ]),
    ]),
    (199, [
        ("The infection can be transmitted through contact with people or pets, as well as through shared spaces "
         "like locker rooms and shower stalls.", [
            c("The infection spreads only through direct contact with people, so locker rooms and shower stalls are "
              "safe.", "scope: people, pets and shared spaces→people only"),
            s("The infection can spread through contact with people or pets and via shared areas such as locker "
              "rooms and showers.", "paraphrase: synonyms"),
        ]),
        ("Treatment usually consists of topical antifungal drugs.", [
            c("Treatment usually consists of oral antibiotics.", "drug-class: topical antifungal→oral antibiotic"),
            s("Antifungal medicines applied to the skin are the usual treatment.", "paraphrase: synonyms"),
        ]),
    ]),
    (200, [
        ("Anal fissures are tears in the anal tissue caused by trauma, while hemorrhoids are normal vascular "
         "structures that can grow abnormally due to various factors.", [
            c("Hemorrhoids are tears in the anal tissue caused by trauma, while anal fissures are vascular "
              "structures.", "role-swap: fissure vs hemorrhoid"),
            s("A fissure is a traumatic tear in the anal tissue, whereas hemorrhoids are normal blood-vessel "
              "structures that can enlarge abnormally.", "paraphrase: both antonyms kept"),
        ]),
        ("Hemorrhoids can lead to rectal bleeding, irritation, and can prolapse, but they usually don't cause pain "
         "unless there is a strangulation or blood clot present.", [
            c("Hemorrhoids are usually very painful even without a clot or strangulation.",
              "negation-dropped: usually painless→usually painful"),
            s("Hemorrhoids are generally painless unless a blood clot forms or they become strangulated, though they "
              "can bleed, irritate or prolapse.", "paraphrase: negation kept in other words"),
        ]),
        ("Anal fissures, on the other hand, are accompanied by severe pain exacerbated by defecation.", [
            c("Anal fissure pain is relieved by passing stool.", "direction: exacerbated→relieved"),
            s("Anal fissures cause severe pain that gets worse with bowel movements.", "paraphrase: synonyms"),
        ]),
    ]),
    (201, [
        ("Kidney stones are suspected in patients with one-sided flank or groin pain and may present with bloody "
         "urine.", [
            c("Kidney stones are suspected when flank pain is present on both sides.", "side: one-sided→both sides"),
            s("Pain in the flank or groin on one side, possibly with blood in the urine, raises suspicion of kidney "
              "stones.", "paraphrase: restructured"),
        ]),
        ("However, a formal diagnosis of kidney stones requires imaging, usually a non-contrast computed tomography "
         "(NCCT) of the abdomen and pelvis.", [
            c("Kidney stones are formally diagnosed with a contrast-enhanced CT scan.",
              "attribute: non-contrast→contrast-enhanced CT"),
            s("Confirming kidney stones needs imaging, typically a CT of the abdomen and pelvis without contrast.",
              "paraphrase: negation kept in other words"),
        ]),
    ]),
]

# (medicine, leaflet paragraph written here, [(verbatim sentence of the paragraph, [claims])])
LEAFLETS: list[tuple[str, str, list[tuple[str, list[tuple[str, str, str]]]]]] = [
    ("sertraline",
     "Take sertraline once a day, either in the morning or in the evening. You can take it with or without food. It "
     "usually takes 2 to 4 weeks before you start to feel better, so keep taking it even if it seems not to be "
     "working.", [
        ("Take sertraline once a day, either in the morning or in the evening.", [
            c("Sertraline is taken three times a day.", "dosing-frequency: once a day→three times a day"),
            s("Sertraline is taken once daily, and the evening is fine.", "paraphrase: compatible subset"),
        ]),
        ("You can take it with or without food.", [
            c("Sertraline must be taken on an empty stomach.", "food: with or without→empty stomach only"),
            s("It's fine to take sertraline with a meal.", "paraphrase: compatible subset"),
        ]),
        ("It usually takes 2 to 4 weeks before you start to feel better, so keep taking it even if it seems not to be "
         "working.", [
            c("If sertraline seems to be doing nothing after a few days, stop taking it.",
              "action: keep taking→stop"),
            s("You may need to wait a fortnight to a month before you feel better, so carry on taking it.",
              "paraphrase: same quantity in another unit"),
        ]),
    ]),
    ("prednisolone",
     "Take prednisolone tablets in the morning with breakfast, as one single dose. Taking it in the morning helps to "
     "prevent sleep problems. Do not stop taking prednisolone suddenly if you have been taking it for more than 3 "
     "weeks, as your body needs time to adjust.", [
        ("Take prednisolone tablets in the morning with breakfast, as one single dose.", [
            c("Take prednisolone as one single dose at bedtime.", "time-of-day: morning→bedtime"),
            c("Prednisolone tablets should be taken on an empty stomach before breakfast.",
              "food: with breakfast→empty stomach"),
            s("Prednisolone is taken once, in the morning, with your breakfast.", "paraphrase: restructured"),
        ]),
        ("Do not stop taking prednisolone suddenly if you have been taking it for more than 3 weeks, as your body "
         "needs time to adjust.", [
            c("After more than 3 weeks on prednisolone, you can stop it all at once.",
              "action: taper→stop abruptly"),
            s("Stopping prednisolone abruptly after over three weeks of use should be avoided, because the body "
              "needs time to adjust.", "paraphrase: negation kept in other words"),
        ]),
    ]),
    ("lansoprazole",
     "Take lansoprazole once a day, in the morning, at least 30 minutes before food. Swallow the capsules whole with "
     "a glass of water. Do not crush or chew them.", [
        ("Take lansoprazole once a day, in the morning, at least 30 minutes before food.", [
            c("Lansoprazole works best taken straight after a meal.", "food: before food→after a meal"),
            s("Take lansoprazole each morning, half an hour or more before eating.",
              "paraphrase: same quantity in another unit"),
        ]),
        ("Do not crush or chew them.", [
            c("The capsules can be crushed or chewed if that is easier.", "negation-dropped: do not crush→may crush"),
            s("The capsules should be swallowed whole, without crushing or chewing.", "paraphrase: negation kept"),
        ]),
    ]),
    ("atorvastatin",
     "Atorvastatin can be taken at any time of day, with or without food, but try to take it at the same time each "
     "day. Avoid drinking large amounts of grapefruit juice, as it can increase the level of atorvastatin in your "
     "blood. Tell your doctor straight away if you get unexplained muscle pain, tenderness or weakness.", [
        ("Atorvastatin can be taken at any time of day, with or without food, but try to take it at the same time "
         "each day.", [
            c("Atorvastatin must be taken at night.", "time-of-day: any time→night only"),
            s("You can take atorvastatin in the morning, ideally at the same time each day.",
              "paraphrase: compatible subset"),
        ]),
        ("Avoid drinking large amounts of grapefruit juice, as it can increase the level of atorvastatin in your "
         "blood.", [
            c("Grapefruit juice lowers the level of atorvastatin in your blood.", "direction: increase→lower"),
            c("Grapefruit juice does not interact with atorvastatin.", "negation: raises levels→no interaction"),
            s("Large amounts of grapefruit juice should be avoided because they can raise atorvastatin levels in the "
              "blood.", "paraphrase: synonyms"),
        ]),
        ("Tell your doctor straight away if you get unexplained muscle pain, tenderness or weakness.", [
            c("Unexplained muscle pain while on atorvastatin is expected and can be ignored.",
              "action: report at once→ignore"),
            s("Let your doctor know immediately about any unexplained muscle weakness, tenderness or pain.",
              "paraphrase: synonyms"),
        ]),
    ]),
    ("amlodipine",
     "Amlodipine is usually taken once a day. The usual starting dose is 5mg, which your doctor may increase to "
     "10mg. Swollen ankles are a common side effect.", [
        ("The usual starting dose is 5mg, which your doctor may increase to 10mg.", [
            c("The usual starting dose of amlodipine is 50 mg.", "quantity: 5 mg→50 mg"),
            c("Amlodipine is usually started at 10 mg, which the doctor may then reduce to 5 mg.",
              "role-swap: starting vs increased dose"),
            s("Amlodipine is usually started at 5 mg and may be raised to 10 mg.", "paraphrase: synonyms"),
        ]),
        ("Swollen ankles are a common side effect.", [
            c("Swollen ankles are a rare side effect of amlodipine.", "frequency: common→rare"),
            s("Ankle swelling happens often with amlodipine.", "paraphrase: synonyms"),
        ]),
    ]),
    ("co-codamol",
     "Co-codamol tablets contain paracetamol and codeine. Do not take more than 8 tablets in 24 hours, and leave at "
     "least 4 hours between doses. Do not take any other medicines that contain paracetamol while you are taking "
     "co-codamol.", [
        ("Do not take more than 8 tablets in 24 hours, and leave at least 4 hours between doses.", [
            c("You can take up to 12 co-codamol tablets in 24 hours.", "quantity: 8→12 tablets a day"),
            c("Leave at least 1 hour between doses of co-codamol.", "quantity: 4 hours→1 hour apart"),
            s("Two tablets every six hours stays within the co-codamol limits.", "paraphrase: compatible instance"),
            s("The maximum is eight tablets a day, with a gap of four hours or more between doses.",
              "paraphrase: negation kept in other words"),
        ]),
        ("Do not take any other medicines that contain paracetamol while you are taking co-codamol.", [
            c("It is fine to take extra paracetamol tablets alongside co-codamol.", "action: avoid→allowed"),
            s("Avoid other paracetamol-containing medicines while on co-codamol.", "paraphrase: negation kept in "
              "other words"),
        ]),
    ]),
    ("doxycycline",
     "Swallow doxycycline capsules whole with a full glass of water while sitting or standing up. Do not take them "
     "just before bed, because they can irritate your food pipe. Doxycycline can make your skin more sensitive to "
     "sunlight, so use a high-factor sunscreen.", [
        ("Swallow doxycycline capsules whole with a full glass of water while sitting or standing up.", [
            c("Take doxycycline lying down so the capsule settles.", "position: upright→lying down"),
            s("Doxycycline capsules should be swallowed whole with plenty of water while you are upright.",
              "paraphrase: synonyms"),
        ]),
        ("Do not take them just before bed, because they can irritate your food pipe.", [
            c("The best time to take doxycycline is just before you go to bed.", "timing: avoid bedtime→bedtime"),
            s("Avoid taking doxycycline right before bed, as it may irritate the oesophagus.",
              "paraphrase: negation kept in other words"),
        ]),
        ("Doxycycline can make your skin more sensitive to sunlight, so use a high-factor sunscreen.", [
            c("Doxycycline makes your skin less sensitive to sunlight.", "direction: more→less sensitive"),
            c("Doxycycline does not affect how your skin reacts to sunlight.", "negation: more sensitive→no effect"),
            s("Because doxycycline can increase sun sensitivity, use a high-factor sunscreen.",
              "paraphrase: restructured"),
        ]),
    ]),
    ("naproxen",
     "Take naproxen with or just after a meal or snack, to reduce the chance of stomach upset. The usual dose for "
     "pain in adults is 250mg to 500mg twice a day. Do not take naproxen if you have ever had a stomach ulcer.", [
        ("Take naproxen with or just after a meal or snack, to reduce the chance of stomach upset.", [
            c("Naproxen is best taken on an empty stomach to avoid stomach upset.", "food: with food→empty stomach"),
            s("Taking naproxen straight after a meal reduces the chance of an upset stomach.",
              "paraphrase: compatible subset"),
        ]),
        ("The usual dose for pain in adults is 250mg to 500mg twice a day.", [
            c("The usual adult dose of naproxen for pain is 250 mg to 500 mg every hour.",
              "dosing-frequency: twice a day→every hour"),
            c("The usual adult dose for pain is 2.5 g to 5 g twice a day.", "quantity: 250-500 mg→2.5-5 g"),
            s("Adults usually take 0.25 g to 0.5 g of naproxen two times a day for pain.",
              "paraphrase: same quantity in another unit"),
        ]),
        ("Do not take naproxen if you have ever had a stomach ulcer.", [
            c("Naproxen is a good choice for people who have had a stomach ulcer.",
              "safety: contraindicated→good choice"),
            s("Anyone who has had a stomach ulcer at any time should avoid naproxen.",
              "paraphrase: negation kept in other words"),
        ]),
    ]),
    ("bisoprolol",
     "Take bisoprolol once a day in the morning. Do not stop taking it suddenly, as this can make your condition "
     "worse. Bisoprolol can make you feel tired or dizzy when you first start taking it.", [
        ("Take bisoprolol once a day in the morning.", [
            c("Take bisoprolol twice a day.", "dosing-frequency: once→twice a day"),
            s("Bisoprolol is taken once each morning.", "paraphrase: synonyms"),
        ]),
        ("Do not stop taking it suddenly, as this can make your condition worse.", [
            c("Stopping bisoprolol abruptly is a safe way to come off it.", "safety: harmful→safe to stop abruptly"),
            s("Stopping bisoprolol abruptly can worsen your condition.", "paraphrase: restructured"),
        ]),
        ("Bisoprolol can make you feel tired or dizzy when you first start taking it.", [
            c("Tiredness and dizziness with bisoprolol appear only after years of treatment.",
              "timing: at the start→after years"),
            s("You may feel dizzy or tired in the early days of taking bisoprolol.", "paraphrase: hedged"),
        ]),
    ]),
    ("furosemide",
     "Take furosemide in the morning, as it will make you need to pee more often. If you take two doses a day, take "
     "the second dose no later than 4pm. Furosemide can lower your potassium levels, so your doctor may check your "
     "blood regularly.", [
        ("Take furosemide in the morning, as it will make you need to pee more often.", [
            c("Take furosemide at bedtime.", "time-of-day: morning→bedtime"),
            s("Morning is the time to take furosemide, because it makes you pass urine more often.",
              "paraphrase: restructured"),
        ]),
        ("If you take two doses a day, take the second dose no later than 4pm.", [
            c("On two doses a day, the second dose belongs late in the evening, around 10pm.",
              "time-of-day: by 4pm→10pm"),
            s("With a twice-daily regimen, have the second dose by 4pm at the latest.", "paraphrase: synonyms"),
        ]),
        ("Furosemide can lower your potassium levels, so your doctor may check your blood regularly.", [
            c("Furosemide can raise your potassium levels.", "direction: lower→raise"),
            c("Furosemide has no effect on potassium levels.", "negation: lowers potassium→no effect"),
            s("Furosemide may reduce the potassium in your blood, so regular blood tests may be done.",
              "paraphrase: synonyms"),
        ]),
    ]),
    ("insulin glargine",
     "Insulin glargine is a long-acting insulin that is injected once a day, at the same time each day. Inject it "
     "under the skin of your tummy, thighs or upper arms, and change the injection site each time. Never inject it "
     "into a vein or muscle.", [
        ("Insulin glargine is a long-acting insulin that is injected once a day, at the same time each day.", [
            c("Insulin glargine is a short-acting insulin injected before every meal.",
              "duration: long-acting→short-acting"),
            s("Insulin glargine is long-acting and injected daily at a consistent time.", "paraphrase: synonyms"),
        ]),
        ("Inject it under the skin of your tummy, thighs or upper arms, and change the injection site each time.", [
            c("Always inject it into exactly the same spot each time.", "action: rotate→same site"),
            s("Rotate the injection site every time, using the skin of the tummy, thighs or upper arms.",
              "paraphrase: synonyms"),
        ]),
        ("Never inject it into a vein or muscle.", [
            c("Insulin glargine may be injected straight into a vein.", "negation-dropped: never→may"),
            s("It must only ever go under the skin, and not into a vein or a muscle.", "paraphrase: negation kept"),
        ]),
    ]),
    ("lithium",
     "Lithium levels in your blood need to be checked regularly with blood tests. Drink plenty of fluids, especially "
     "in hot weather or if you are exercising, because dehydration can raise your lithium levels. Do not change your "
     "lithium brand without talking to your doctor.", [
        ("Lithium levels in your blood need to be checked regularly with blood tests.", [
            c("Lithium blood levels need checking only once, when you start treatment.",
              "dosing-frequency: regularly→once"),
            c("You do not need blood tests while you are taking lithium.", "negation: regular tests→not needed"),
            s("You will need regular blood tests to check your lithium levels.", "paraphrase: restructured"),
        ]),
        ("Drink plenty of fluids, especially in hot weather or if you are exercising, because dehydration can raise "
         "your lithium levels.", [
            c("Dehydration can lower your lithium levels.", "direction: raise→lower"),
            c("Cut down on fluids in hot weather while you are taking lithium.", "action: drink more→drink less"),
            s("In hot weather or when exercising, drink plenty, because becoming dehydrated can push lithium levels "
              "up.", "paraphrase: synonyms"),
        ]),
        ("Do not change your lithium brand without talking to your doctor.", [
            c("Switching between lithium brands is fine to do on your own.", "action: consult first→switch freely"),
            s("Speak to your doctor before changing to a different brand of lithium.",
              "paraphrase: negation kept in other words"),
        ]),
    ]),
    ("methotrexate",
     "Methotrexate for arthritis is taken once a week, on the same day each week. Taking it every day by mistake can "
     "be very dangerous. You will need regular blood tests to check your blood count and liver while you take it.", [
        ("Methotrexate for arthritis is taken once a week, on the same day each week.", [
            c("Methotrexate for arthritis is taken once a day.", "dosing-frequency: weekly→daily"),
            s("For arthritis, methotrexate is a weekly medicine taken on the same day every week.",
              "paraphrase: synonyms"),
        ]),
        ("Taking it every day by mistake can be very dangerous.", [
            c("Taking methotrexate every day by mistake is harmless.", "safety: very dangerous→harmless"),
            s("Accidentally taking methotrexate daily could be extremely dangerous.", "paraphrase: synonyms"),
        ]),
        ("You will need regular blood tests to check your blood count and liver while you take it.", [
            c("Once you have started methotrexate, blood tests can stop.", "action: regular tests→stop tests"),
            s("Regular blood tests of your liver and blood count are part of methotrexate treatment.",
              "paraphrase: restructured"),
        ]),
    ]),
    ("alendronic acid",
     "Take alendronic acid once a week, first thing in the morning, at least 30 minutes before breakfast, with a "
     "full glass of plain water. Stay sitting or standing upright for at least 30 minutes after taking it. Do not "
     "take it with tea, coffee, juice or milk.", [
        ("Take alendronic acid once a week, first thing in the morning, at least 30 minutes before breakfast, with a "
         "full glass of plain water.", [
            c("Take alendronic acid once a week, straight after breakfast.", "food: before breakfast→after"),
            c("Alendronic acid is taken every day, first thing in the morning with water.",
              "dosing-frequency: weekly→daily"),
            s("Alendronic acid is taken weekly on waking, half an hour or more before breakfast, with a full glass "
              "of plain water.", "paraphrase: same quantity in another unit"),
        ]),
        ("Stay sitting or standing upright for at least 30 minutes after taking it.", [
            c("Lie down for 30 minutes after taking alendronic acid.", "position: upright→lying down"),
            s("Keep upright, sitting or standing, for 30 minutes or more after the tablet.", "paraphrase: synonyms"),
        ]),
        ("Do not take it with tea, coffee, juice or milk.", [
            c("You can take alendronic acid with a glass of milk.", "negation-dropped: not with milk→with milk"),
            s("Tea, coffee, juice and milk are drinks to avoid when taking it.",
              "paraphrase: negation kept in other words"),
        ]),
    ]),
    ("tamsulosin",
     "Take tamsulosin once a day, after the same meal each day, usually breakfast. It can make you feel dizzy when "
     "you stand up, especially when you first start taking it. If you are having cataract surgery, tell your eye "
     "surgeon that you take tamsulosin.", [
        ("Take tamsulosin once a day, after the same meal each day, usually breakfast.", [
            c("Take tamsulosin once a day before you have eaten anything.", "food: after a meal→before food"),
            s("Tamsulosin is taken daily after the same meal, typically breakfast.", "paraphrase: synonyms"),
        ]),
        ("It can make you feel dizzy when you stand up, especially when you first start taking it.", [
            c("Dizziness on standing is most likely once you have been taking tamsulosin for a long time.",
              "timing: at the start→after long use"),
            s("Feeling dizzy on standing up is most likely in the early days of tamsulosin treatment.",
              "paraphrase: hedged"),
        ]),
        ("If you are having cataract surgery, tell your eye surgeon that you take tamsulosin.", [
            c("There is no need to mention tamsulosin to your eye surgeon before cataract surgery.",
              "negation: tell surgeon→no need"),
            s("Let your eye surgeon know about tamsulosin if you are due to have cataract surgery.",
              "paraphrase: synonyms"),
        ]),
    ]),
    ("clopidogrel",
     "Clopidogrel makes your blood less sticky, which lowers your chance of having a heart attack or stroke. You may "
     "bleed more easily than usual, for example nosebleeds or bruising. Do not stop taking clopidogrel without "
     "speaking to your doctor, even if you are due to have an operation or dental treatment.", [
        ("Clopidogrel makes your blood less sticky, which lowers your chance of having a heart attack or stroke.", [
            c("Clopidogrel makes your blood stickier.", "direction: less→more sticky"),
            s("By making the blood less sticky, clopidogrel reduces your risk of a heart attack or stroke.",
              "paraphrase: restructured"),
        ]),
        ("You may bleed more easily than usual, for example nosebleeds or bruising.", [
            c("Clopidogrel makes you bleed less easily than usual.", "direction: more→less bleeding"),
            c("Clopidogrel does not affect how easily you bleed.", "negation: bleed more easily→no effect"),
            s("Bruising and nosebleeds may happen more readily while you take clopidogrel.", "paraphrase: synonyms"),
        ]),
        ("Do not stop taking clopidogrel without speaking to your doctor, even if you are due to have an operation or "
         "dental treatment.", [
            c("Stop clopidogrel on your own a week before any operation or dental treatment.",
              "action: keep taking→stop before surgery"),
            s("Even before surgery or dental work, speak to your doctor before stopping clopidogrel.",
              "paraphrase: negation kept in other words"),
        ]),
    ]),
    ("nitrofurantoin",
     "Take nitrofurantoin with food or milk, as this helps your body absorb it and reduces stomach upset. It can turn "
     "your pee dark yellow or brown, which is harmless. For a urine infection, the usual dose is 50mg four times a "
     "day or 100mg twice a day for 3 to 7 days.", [
        ("Take nitrofurantoin with food or milk, as this helps your body absorb it and reduces stomach upset.", [
            c("Take nitrofurantoin on an empty stomach to help your body absorb it.", "food: with food→empty stomach"),
            c("Nitrofurantoin should not be taken with milk.", "negation: with food or milk→not with milk"),
            s("Having nitrofurantoin with milk or a meal improves absorption and eases stomach upset.",
              "paraphrase: synonyms"),
        ]),
        ("It can turn your pee dark yellow or brown, which is harmless.", [
            c("Dark yellow or brown urine on nitrofurantoin is a dangerous sign.", "safety: harmless→dangerous"),
            s("Nitrofurantoin may darken your urine to yellow or brown, but this does no harm.",
              "paraphrase: synonyms"),
        ]),
        ("For a urine infection, the usual dose is 50mg four times a day or 100mg twice a day for 3 to 7 days.", [
            c("For a urine infection the usual course is 50mg four times a day for 3 to 7 months.",
              "duration: days→months"),
            c("The usual dose for a urine infection is 100mg four times a day.", "quantity: 100 mg twice→four times"),
            s("A typical course for a urine infection is 100 mg two times a day for between 3 and 7 days.",
              "paraphrase: compatible subset"),
            s("One usual option is 0.05 g taken four times daily.", "paraphrase: same quantity in another unit"),
        ]),
    ]),
    ("beclometasone inhaler",
     "Use your beclometasone inhaler every day, even when you feel well, as it works by preventing symptoms over "
     "time. It will not give quick relief during an asthma attack. Rinse your mouth with water after each use to "
     "help prevent a sore mouth or throat.", [
        ("Use your beclometasone inhaler every day, even when you feel well, as it works by preventing symptoms over "
         "time.", [
            c("Use beclometasone only when you have symptoms, and skip it on days you feel well.",
              "action: daily→only when symptomatic"),
            s("Keep using the beclometasone inhaler daily, including on days you feel fine.", "paraphrase: synonyms"),
        ]),
        ("It will not give quick relief during an asthma attack.", [
            c("Beclometasone gives quick relief during an asthma attack.", "negation-dropped: will not→gives"),
            s("During an asthma attack, beclometasone won't act fast enough to relieve symptoms.",
              "paraphrase: negation kept"),
        ]),
        ("Rinse your mouth with water after each use to help prevent a sore mouth or throat.", [
            c("Rinsing your mouth after using the inhaler makes a sore throat more likely.",
              "direction: prevent→cause"),
            s("Rinsing your mouth out with water after every use helps avoid a sore mouth or throat.",
              "paraphrase: synonyms"),
        ]),
    ]),
    ("mirtazapine",
     "Take mirtazapine once a day, in the evening before you go to bed, as it can make you feel sleepy. It can "
     "increase your appetite and you may put on weight. Do not drink alcohol while taking mirtazapine.", [
        ("Take mirtazapine once a day, in the evening before you go to bed, as it can make you feel sleepy.", [
            c("Take mirtazapine in the morning, since it can make you feel sleepy.", "time-of-day: evening→morning"),
            c("Mirtazapine does not cause drowsiness, so it can be taken at any time of day.",
              "negation: sleepy→not drowsy"),
            s("Mirtazapine is taken once daily at bedtime because it may cause drowsiness.", "paraphrase: synonyms"),
        ]),
        ("It can increase your appetite and you may put on weight.", [
            c("Mirtazapine tends to reduce your appetite and can lead to weight loss.", "direction: increase→reduce"),
            s("You may eat more and gain weight on mirtazapine.", "paraphrase: synonyms"),
        ]),
        ("Do not drink alcohol while taking mirtazapine.", [
            c("A moderate amount of alcohol is fine with mirtazapine.", "action: avoid→allowed"),
            s("Avoid alcohol while you are on mirtazapine.", "paraphrase: negation kept in other words"),
        ]),
    ]),
    ("gabapentin",
     "Gabapentin is usually started at a low dose, which is increased slowly over several days or weeks. Do not stop "
     "taking gabapentin suddenly, as you may get withdrawal symptoms. It can make you feel sleepy or dizzy, so do not "
     "drive until you know how it affects you.", [
        ("Gabapentin is usually started at a low dose, which is increased slowly over several days or weeks.", [
            c("Gabapentin is usually started at a high dose, which is then gradually reduced.",
              "direction: low then up→high then down"),
            s("Treatment usually begins with a small dose of gabapentin that is built up gradually over days or "
              "weeks.", "paraphrase: synonyms"),
        ]),
        ("Do not stop taking gabapentin suddenly, as you may get withdrawal symptoms.", [
            c("Gabapentin can be stopped suddenly without any withdrawal symptoms.", "safety: withdrawal→none"),
            s("Coming off gabapentin abruptly can cause withdrawal symptoms.", "paraphrase: restructured"),
        ]),
        ("It can make you feel sleepy or dizzy, so do not drive until you know how it affects you.", [
            c("Gabapentin tends to make you more alert, so driving is fine from the first dose.",
              "direction: sleepy→alert"),
            s("Wait until you know how gabapentin affects you before driving, since it may make you drowsy or "
              "dizzy.", "paraphrase: restructured"),
        ]),
    ]),
    ("ferrous sulfate",
     "Ferrous sulfate is best taken on an empty stomach, 1 hour before a meal, but you can take it with food if it "
     "upsets your stomach. Do not take indigestion remedies, tea or coffee at the same time, as they stop the iron "
     "being absorbed. It is normal for iron tablets to make your poo darker or black.", [
        ("Ferrous sulfate is best taken on an empty stomach, 1 hour before a meal, but you can take it with food if "
         "it upsets your stomach.", [
            c("Ferrous sulfate is best taken straight after a meal.", "food: empty stomach→after a meal"),
            s("For best results take ferrous sulfate an hour before eating, though it can go with food if it upsets "
              "your stomach.", "paraphrase: restructured"),
            s("If ferrous sulfate upsets your stomach, you may take it with food.",
              "paraphrase: conditional kept, compatible subset"),
        ]),
        ("Do not take indigestion remedies, tea or coffee at the same time, as they stop the iron being absorbed.", [
            c("Tea or coffee taken with iron tablets helps the iron to be absorbed.", "direction: block→help"),
            s("Keep tea, coffee and indigestion remedies apart from your iron tablets, as they block absorption.",
              "paraphrase: negation kept in other words"),
        ]),
        ("It is normal for iron tablets to make your poo darker or black.", [
            c("Dark or black stools on iron tablets are a warning sign to stop them at once.",
              "safety: normal→warning sign"),
            s("Iron tablets often make stools dark or black, and this is normal.", "paraphrase: synonyms"),
        ]),
    ]),
    ("hydroxychloroquine",
     "Hydroxychloroquine can take up to 12 weeks to start working. Take it with food to reduce the chance of feeling "
     "sick. You should have an eye test before starting and then regular eye checks, because long-term use can "
     "affect your eyes.", [
        ("Hydroxychloroquine can take up to 12 weeks to start working.", [
            c("Hydroxychloroquine starts working within 12 hours.", "quantity: 12 weeks→12 hours"),
            s("Hydroxychloroquine may take a couple of months to start working.",
              "paraphrase: hedged, compatible instance"),
            s("It can be up to about three months before hydroxychloroquine starts to work.",
              "paraphrase: same quantity in another unit"),
        ]),
        ("Take it with food to reduce the chance of feeling sick.", [
            c("Take hydroxychloroquine on an empty stomach to avoid feeling sick.", "food: with food→empty stomach"),
            s("Having hydroxychloroquine with food lowers the chance of nausea.", "paraphrase: synonyms"),
        ]),
        ("You should have an eye test before starting and then regular eye checks, because long-term use can affect "
         "your eyes.", [
            c("Long-term hydroxychloroquine protects the eyes, so eye checks are unnecessary.",
              "direction: harms→protects eyes"),
            s("Because prolonged use can harm the eyes, you'll have an eye test before starting and regular checks "
              "afterwards.", "paraphrase: restructured"),
        ]),
    ]),
    ("allopurinol",
     "Allopurinol is taken every day to prevent gout attacks; it does not treat an attack that has already started. "
     "Keep taking it even if you have a gout attack. Drink plenty of water, about 2 litres a day, while taking "
     "allopurinol.", [
        ("Allopurinol is taken every day to prevent gout attacks; it does not treat an attack that has already "
         "started.", [
            c("Allopurinol is taken to treat a gout attack once it has started.", "role: prevention→acute treatment"),
            s("Daily allopurinol prevents gout attacks but won't treat one already under way.",
              "paraphrase: negation kept"),
        ]),
        ("Keep taking it even if you have a gout attack.", [
            c("Stop allopurinol if you have a gout attack.", "action: continue→stop"),
            s("Carry on taking allopurinol during a gout attack.", "paraphrase: synonyms"),
        ]),
        ("Drink plenty of water, about 2 litres a day, while taking allopurinol.", [
            c("Limit your water to about 500 ml a day while taking allopurinol.", "quantity: 2 litres→500 ml"),
            s("Drink around 2,000 ml of water daily while on allopurinol.",
              "paraphrase: same quantity in another unit"),
        ]),
    ]),
    ("colchicine",
     "Colchicine works best if you take it as soon as you feel a gout attack starting. Diarrhoea is a common side "
     "effect; stop taking colchicine and speak to your doctor if you get diarrhoea or are sick. Avoid grapefruit "
     "juice while taking colchicine.", [
        ("Colchicine works best if you take it as soon as you feel a gout attack starting.", [
            c("Colchicine works best when you wait a few days into a gout attack before taking it.",
              "timing: at onset→days later"),
            s("Taking colchicine at the first sign of a gout attack makes it work best.", "paraphrase: synonyms"),
        ]),
        ("Diarrhoea is a common side effect; stop taking colchicine and speak to your doctor if you get diarrhoea or "
         "are sick.", [
            c("Diarrhoea is a rare side effect of colchicine.", "frequency: common→rare"),
            c("If you get diarrhoea, keep taking colchicine and let it settle.", "action: stop→continue"),
            s("If colchicine gives you diarrhoea or makes you vomit, stop it and contact your doctor.",
              "paraphrase: synonyms"),
        ]),
        ("Avoid grapefruit juice while taking colchicine.", [
            c("Grapefruit juice is safe to drink with colchicine.", "action: avoid→safe"),
            s("Do not drink grapefruit juice while on colchicine.", "paraphrase: negation made explicit"),
        ]),
    ]),
    ("cetirizine",
     "Cetirizine is an antihistamine that relieves hay fever and allergy symptoms. The usual dose for adults is 10mg "
     "once a day. It is less likely to make you drowsy than older antihistamines, such as chlorphenamine.", [
        ("The usual dose for adults is 10mg once a day.", [
            c("The usual adult dose of cetirizine is 10mg four times a day.",
              "dosing-frequency: once→four times a day"),
            s("Adults usually take cetirizine 10 mg a day, in a single dose.", "paraphrase: synonyms"),
        ]),
        ("It is less likely to make you drowsy than older antihistamines, such as chlorphenamine.", [
            c("It is more likely to make you drowsy than older antihistamines such as chlorphenamine.",
              "direction: less→more drowsy"),
            s("Older antihistamines like chlorphenamine cause drowsiness more often than it does.",
              "paraphrase: comparison restated from the other side"),
        ]),
    ]),
    ("glyceryl trinitrate (GTN) spray",
     "If you get chest pain, sit down and spray 1 or 2 puffs of GTN under your tongue. If the pain has not gone after "
     "5 minutes, use another dose. If you still have pain 5 minutes after the second dose, call 999 for an "
     "ambulance.", [
        ("If you get chest pain, sit down and spray 1 or 2 puffs of GTN under your tongue.", [
            c("For chest pain, stand up and spray 1 or 2 puffs of GTN under your tongue.",
              "position: sit down→stand up"),
            c("For chest pain, breathe the GTN spray deep into your lungs.", "route: under the tongue→inhaled"),
            s("Sit down and use one or two sprays of GTN under your tongue when you get chest pain.",
              "paraphrase: restructured"),
        ]),
        ("If the pain has not gone after 5 minutes, use another dose.", [
            c("If the pain has not gone after 5 minutes, wait an hour before using another dose.",
              "timing: after 5 minutes→after an hour"),
            s("You may take another dose if the pain is still there after five minutes.",
              "paraphrase: negation kept in other words"),
        ]),
        ("If you still have pain 5 minutes after the second dose, call 999 for an ambulance.", [
            c("If pain continues 5 minutes after the second dose, take a third dose and book a routine GP "
              "appointment.", "urgency: call 999→routine appointment"),
            s("Call an ambulance on 999 if pain continues five minutes after the second dose.",
              "paraphrase: restructured"),
        ]),
    ]),
    ("lactulose",
     "Lactulose is a laxative that softens your poo. It usually takes 2 to 3 days to work. Drink plenty of fluids "
     "while you are taking it.", [
        ("Lactulose is a laxative that softens your poo.", [
            c("Lactulose is a laxative that hardens your stools.", "direction: softens→hardens"),
            s("Lactulose works as a laxative by making stools softer.", "paraphrase: synonyms"),
        ]),
        ("It usually takes 2 to 3 days to work.", [
            c("Lactulose usually works within 2 to 3 hours.", "quantity: days→hours"),
            s("Lactulose often takes a couple of days to have an effect.", "paraphrase: hedged"),
            s("You may have to wait 48 to 72 hours for lactulose to take effect.",
              "paraphrase: same quantity in another unit"),
        ]),
        ("Drink plenty of fluids while you are taking it.", [
            c("Cut back on drinks while taking lactulose.", "action: drink more→drink less"),
            s("Keep well hydrated while using lactulose.", "paraphrase: synonyms"),
        ]),
    ]),
    ("propranolol",
     "Propranolol can hide the warning signs of low blood sugar, such as shaking or a fast heartbeat, so people with "
     "diabetes should check their sugar levels more often. Do not take propranolol if you have asthma, as it can "
     "cause breathing difficulties.", [
        ("Propranolol can hide the warning signs of low blood sugar, such as shaking or a fast heartbeat, so people "
         "with diabetes should check their sugar levels more often.", [
            c("Propranolol makes the warning signs of low blood sugar, such as shaking, more obvious.",
              "direction: hide→accentuate"),
            s("Since propranolol can mask hypo warning signs like a racing heart or trembling, people with diabetes "
              "should test their sugar more frequently.", "paraphrase: synonyms"),
        ]),
        ("Do not take propranolol if you have asthma, as it can cause breathing difficulties.", [
            c("Propranolol is a good choice for people with asthma because it eases breathing.",
              "safety: contraindicated→good choice"),
            s("People with asthma should avoid propranolol, since it can make breathing difficult.",
              "paraphrase: negation kept in other words"),
        ]),
    ]),
    ("adrenaline auto-injector",
     "If you have signs of a severe allergic reaction, use your adrenaline auto-injector straight away, then call "
     "999. Inject it into the outer side of your thigh; it can go through clothing. If symptoms do not improve after "
     "5 minutes, use a second auto-injector.", [
        ("If you have signs of a severe allergic reaction, use your adrenaline auto-injector straight away, then call "
         "999.", [
            c("Call 999 first, and use your adrenaline auto-injector only if the ambulance is delayed.",
              "order: inject then call→call then maybe inject"),
            s("In a severe allergic reaction, use the adrenaline auto-injector immediately and then dial 999.",
              "paraphrase: synonyms"),
        ]),
        ("Inject it into the outer side of your thigh; it can go through clothing.", [
            c("Inject it into the inner side of your thigh.", "side: outer→inner thigh"),
            c("Take your clothing off first, because the needle will be blocked by fabric.",
              "action: through clothing→remove clothing"),
            s("The injection goes into the outer thigh and may be given through clothes.", "paraphrase: synonyms"),
        ]),
        ("If symptoms do not improve after 5 minutes, use a second auto-injector.", [
            c("Wait at least 30 minutes before using a second auto-injector.", "quantity: 5→30 minutes"),
            s("A second auto-injector should be used if there is no improvement after five minutes.",
              "paraphrase: negation kept"),
        ]),
    ]),
    ("senna",
     "Senna is a stimulant laxative that usually works within 8 to 12 hours, so it is best taken at bedtime. It is "
     "meant for short-term use only; speak to your doctor if you need it for longer than a week.", [
        ("Senna is a stimulant laxative that usually works within 8 to 12 hours, so it is best taken at bedtime.", [
            c("Senna usually takes 8 to 12 days to work.", "quantity: hours→days"),
            c("Senna is best taken first thing in the morning.", "time-of-day: bedtime→morning"),
            s("Taken at bedtime, senna would usually work by the next morning.", "paraphrase: compatible instance"),
            s("Senna normally acts in 8–12 hours, which is why taking it at bedtime is best.",
              "paraphrase: restructured"),
        ]),
        ("It is meant for short-term use only; speak to your doctor if you need it for longer than a week.", [
            c("Senna is designed for long-term daily use.", "duration: short-term→long-term"),
            s("Senna is for short-term use; check with your doctor if you need it for more than seven days.",
              "paraphrase: same quantity in another unit"),
        ]),
    ]),
    ("zopiclone",
     "Zopiclone is usually prescribed for 2 to 4 weeks only, because your body can get used to it. Take it just "
     "before bedtime. Do not drink alcohol while taking zopiclone, as it will increase its effect.", [
        ("Zopiclone is usually prescribed for 2 to 4 weeks only, because your body can get used to it.", [
            c("Zopiclone is usually prescribed for several months at a time.", "duration: weeks→months"),
            s("A three-week course of zopiclone is typical.", "paraphrase: compatible instance"),
            s("Prescriptions for zopiclone normally last just two to four weeks, since the body can become used to "
              "it.", "paraphrase: synonyms"),
        ]),
        ("Do not drink alcohol while taking zopiclone, as it will increase its effect.", [
            c("Alcohol weakens the effect of zopiclone.", "direction: increase→weaken"),
            s("Alcohol would strengthen the effect of zopiclone, so avoid it.",
              "paraphrase: negation kept in other words"),
        ]),
    ]),
]

LABELS = {"c": "contradicted", "s": "supported"}


def normalise_answer(text: str) -> str:
    """The evidence form of a K-QA answer: each whitespace run that holds a newline becomes one space; ends stripped."""
    return re.sub(r"\s*\n\s*", " ", text).strip()


def kqa_evidence(line: int, path: Path = KQA_PATH) -> str:
    """``Free_form_answer`` of the 1-based ``line`` of the K-QA file, normalised by :func:`normalise_answer`."""
    if line not in KQA_LINES:
        raise ValueError(f"K-QA line {line} is outside the held-out range {KQA_LINES.start}-{KQA_LINES.stop - 1}")
    rows = path.read_text(encoding="utf-8").splitlines()
    return normalise_answer(json.loads(rows[line - 1])["Free_form_answer"])


def _claim_records(group: str, n: int, evidence: str, source: str, sentence: str,
                   claims: list[tuple[str, str, str]]) -> list[dict[str, str]]:
    if sentence not in evidence:
        raise AssertionError(f"{group}-{n:02d}: evidence sentence is not in its evidence: {sentence!r}")
    out = []
    counters = {"c": 0, "s": 0}
    for code, claim, transform in claims:
        counters[code] += 1
        family, sep, detail = transform.partition(": ")
        if not (sep and family and detail):
            raise AssertionError(f"transform must read 'family: detail': {transform!r}")
        if (code == "s") != (family == "paraphrase"):
            raise AssertionError(f"{group}-{n:02d}: label {code!r} does not fit transform family {family!r}")
        out.append({
            "id": f"nh-{group}-{n:02d}-{code}{counters[code]}",
            "kind": "natural_written",
            "label": LABELS[code],
            "claim": claim,
            "evidence": evidence,
            "evidence_sentence": sentence,
            "source": source,
            "transform": transform,
            "split": "heldout",
        })
    return out


def build_records(kqa_path: Path = KQA_PATH) -> list[dict[str, str]]:
    """Every record of the set, sorted by id (ids are zero-padded, so this is source, line, sentence, label order)."""
    rows = kqa_path.read_text(encoding="utf-8").splitlines()
    records: list[dict[str, str]] = []
    for line, sentences in KQA:
        if line not in KQA_LINES:
            raise AssertionError(f"K-QA line {line} is outside {KQA_LINES}")
        evidence = normalise_answer(json.loads(rows[line - 1])["Free_form_answer"])
        for n, (sentence, claims) in enumerate(sentences, start=1):
            records += _claim_records(f"kqa{line}", n, evidence, KQA_SOURCE.format(line=line), sentence, claims)
    n = 0
    for _medicine, paragraph, sentences in LEAFLETS:
        for sentence, claims in sentences:
            n += 1
            records += _claim_records("leaflet", n, paragraph, LEAFLET_SOURCE, sentence, claims)
    if n > 99:
        raise AssertionError("leaflet sentence numbers are two digits wide")
    ids = [r["id"] for r in records]
    if len(ids) != len(set(ids)):
        raise AssertionError("duplicate ids")
    claims_seen = [r["claim"] for r in records]
    if len(claims_seen) != len(set(claims_seen)):
        raise AssertionError("duplicate claims")
    return sorted(records, key=lambda r: r["id"])


def render(records: list[dict[str, str]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def summary(records: list[dict[str, str]]) -> dict[str, dict[str, int]]:
    """Counts per label, per transform family (contradicted) and per kind of paraphrase (supported)."""
    out: dict[str, dict[str, int]] = {"label": {}, "contradicted_family": {}, "supported_kind": {}, "source": {}}
    for r in records:
        out["label"][r["label"]] = out["label"].get(r["label"], 0) + 1
        family, _, detail = r["transform"].partition(": ")
        key = ("contradicted_family", family) if r["label"] == "contradicted" else ("supported_kind", detail)
        out[key[0]][key[1]] = out[key[0]].get(key[1], 0) + 1
        src = "kqa" if r["source"].startswith("data/demo/kqa") else "leaflet"
        out["source"][f"{src} {r['label']}"] = out["source"].get(f"{src} {r['label']}", 0) + 1
    return out


def main() -> int:
    records = build_records()
    OUT_PATH.write_text(render(records), encoding="utf-8")
    print(json.dumps(summary(records), indent=1, ensure_ascii=False))
    print(f"wrote {len(records)} records to {OUT_PATH.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
