"""Build tests/scoring/data/natural_contradictions.jsonl (hand-written contradictions and paraphrases).

    .venv/bin/python bench/data/build_natural_contradictions.py

Every claim below was written by hand, by a helper who did not see ``scoring/metrics/contradiction.py`` or any
word list under ``scoring/`` (the set measures how far a detector generalises, so it must not be drawn from the
detector's lexicons). Each entry is one evidence sentence and the claims written from it: ``c`` claims
contradict it (a reversed instruction or fact, phrased as a real wrong answer would be), ``s`` claims are
faithful paraphrases (supported). Evidence sentences come from the K-QA physician answers
(``data/demo/kqa/questions_w_answers.jsonl``, ``Free_form_answer``; the evidence passage is the whole answer)
or from patient-leaflet paragraphs written here (source ``written: patient leaflet``).

``transform`` is ``family: detail``; the family names the kind of reversal (or ``paraphrase`` for supported
pairs). ``split`` is ``dev`` or ``test`` from the SHA-256 of the id's stem (the part before the last ``-``),
so the contradicted and supported claims made from one sentence always land in the same split.
Provenance and counts: tests/scoring/data/natural_contradictions.md.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KQA = ROOT / "data/demo/kqa/questions_w_answers.jsonl"
OUT = ROOT / "tests/scoring/data/natural_contradictions.jsonl"
KIND = "natural_written"

# (K-QA line, evidence sentence, [(c|s, claim, transform), ...])
KQA_ITEMS: list[tuple[int, str, list[tuple[str, str, str]]]] = [
    (1, "It is considered an effective and well-tolerated antidepressant.", [
        ("c", "It is regarded as an ineffective antidepressant that patients tolerate poorly.",
         "quality: effective/well-tolerated→ineffective/poorly tolerated"),
        ("s", "It is thought to be an antidepressant that works and that patients tolerate well.", "paraphrase"),
    ]),
    (1, "The benefits of Lexapro for treating depression occur within a few weeks, but it can take about 1 to 2 "
        "months before you feel its full effects.", [
        ("c", "Lexapro reaches its full effect on depression within the first few days, and the benefit then fades "
              "over the next 1 to 2 months.", "hard: onset restructured (full effect early, fading later)"),
        ("s", "Lexapro starts helping depression within a few weeks, though the full effect may take one to two "
              "months.", "paraphrase"),
    ]),
    (2, "It is the preferred treatment for children who weigh less than 15 kg and for pregnant or nursing "
        "individuals.", [
        ("c", "It is the treatment to avoid in children under 15 kg and in pregnant or nursing individuals.",
         "pregnancy: preferred→avoid"),
        ("s", "For pregnant or nursing people and for children under 15 kg, it is the treatment of choice.",
         "paraphrase"),
    ]),
    (3, "Respiratory infections are commonly caused by viruses, but can also be caused by bacteria and fungi.", [
        ("c", "Respiratory infections are rarely caused by viruses; bacteria and fungi are the usual culprits.",
         "frequency: commonly→rarely"),
        ("s", "Viruses are the usual cause of respiratory infections, although bacteria and fungi can cause them "
              "too.", "paraphrase"),
    ]),
    (3, "Protective measures such as wearing a mask, washing hands, sneezing and coughing into your elbow or a "
        "tissue, and vaccinating against respiratory infections can reduce the transmission rate of respiratory "
        "infections.", [
        ("c", "Wearing a mask, washing hands, coughing into your elbow and getting vaccinated can push up the "
              "transmission rate of respiratory infections.", "direction: reduce→push up"),
        ("s", "Masks, hand washing, coughing into a tissue or elbow, and vaccination can lower how often "
              "respiratory infections spread.", "paraphrase: same direction, reduce→lower"),
    ]),
    (4, "Most infected individuals are asymptomatic or only experience mild symptoms.", [
        ("c", "Most infected individuals develop severe symptoms.", "severity: asymptomatic/mild→severe"),
        ("s", "The majority of people infected have either no symptoms or only mild ones.", "paraphrase"),
    ]),
    (4, "Low-risk strains can cause warts on the skin or genitals, whereas high-risk strains of HPV are "
        "associated with an increased risk of several types of cancer, such as cervical, throat, mouth, anus and "
        "genital cancer.", [
        ("c", "High-risk HPV strains are the ones that cause skin and genital warts, whereas the low-risk strains "
              "are linked to cervical, throat and anal cancer.", "hard: roles of low-/high-risk strains swapped"),
        ("s", "Skin or genital warts come from low-risk HPV strains, while high-risk strains raise the risk of "
              "cancers such as cervical, throat and anal cancer.", "paraphrase: both antonyms kept"),
    ]),
    (5, "However, they are most effective when taken within 48-72 hours of the onset of symptoms.", [
        ("c", "However, they work best when started once the first 72 hours of symptoms have passed.",
         "timing: early→late start"),
        ("s", "They work best if started within 48 to 72 hours after symptoms begin.", "paraphrase"),
    ]),
    (6, "It is usually harmless and temporary, but it might also be a sign of an underlying health problem or a "
        "medication side effect.", [
        ("c", "It is usually dangerous and permanent, though it can occasionally be a medication side effect.",
         "severity: harmless/temporary→dangerous/permanent"),
        ("s", "A white tongue is generally harmless and passes, although it can sometimes point to an underlying "
              "health problem or a side effect of a medicine.", "paraphrase"),
    ]),
    (6, "A rare cause of white tongue is cancer.", [
        ("c", "Cancer is one of the most frequent causes of a white tongue.", "frequency: rare→most frequent"),
        ("s", "Cancer only rarely causes a white tongue.", "paraphrase"),
    ]),
    (7, "If you miss your dose of Saxenda, take a dose as soon as you remember on the same day.", [
        ("c", "If you miss your dose of Saxenda, skip it for that day and wait for the next scheduled dose.",
         "action: take when remembered→skip"),
        ("s", "A missed Saxenda dose should be taken on the same day, as soon as you remember it.", "paraphrase"),
    ]),
    (7, "Do not take an extra dose of Saxenda or increase your dose to make up for a missed dose.", [
        ("c", "To make up for a missed dose, take an extra dose of Saxenda or increase your dose.",
         "negation: prohibition removed"),
        ("s", "Don't double up or raise your Saxenda dose to compensate for a dose you missed.",
         "paraphrase: negation kept, increase→raise"),
    ]),
    (8, "Antispasmodic muscle relaxants are prescribed for the short-term relief of musculoskeletal pain, such as "
        "acute low back pain and neck pain.", [
        ("c", "Antispasmodic muscle relaxants are prescribed for the long-term relief of musculoskeletal pain such "
              "as low back pain and neck pain.", "duration: short-term→long-term"),
        ("s", "For acute low back or neck pain, antispasmodic muscle relaxants are given as short-term relief.",
         "paraphrase"),
    ]),
    (8, "Antispasmodic muscle relaxants must be used with caution in older adults, as the risk of adverse effects "
        "increases with age.", [
        ("c", "Antispasmodic muscle relaxants are especially safe in older adults, since the risk of adverse "
              "effects falls with age.", "direction: increases→falls with age"),
        ("s", "Older adults need to take antispasmodic muscle relaxants carefully because side effects become more "
              "likely as people age.", "paraphrase"),
    ]),
    (9, "Furthermore, activated charcoal can interfere with the absorption of other drugs.", [
        ("c", "Activated charcoal also helps the body absorb other drugs.", "hard: interfere with→helps (verb)"),
        ("s", "Activated charcoal may also hinder the absorption of other medicines.", "paraphrase"),
    ]),
    (10, "Nasal corticosteroid sprays reduce inflammation and swelling in the nose.", [
        ("c", "Nasal corticosteroid sprays aggravate inflammation and swelling in the nose.",
         "direction: reduce→aggravate"),
        ("s", "Corticosteroid nasal sprays lessen swelling and inflammation inside the nose.",
         "paraphrase: same direction, reduce→lessen"),
    ]),
    (10, "However, they should not be used for more than 2-3 days at a time.", [
        ("c", "They are meant to be used continuously for several weeks at a time.", "duration: 2-3 days→weeks"),
        ("s", "Their use should be limited to 2 or 3 days at a time.", "paraphrase"),
    ]),
    (10, "Their short-term use means they are better for treating nasal congestion caused by a cold rather than "
         "allergies.", [
        ("c", "Because they can be used for long stretches, they suit allergic congestion better than congestion "
              "from a cold.", "hard: restructured (short-term→long stretches, cold↔allergy)"),
        ("s", "Since they are only for short-term use, they suit cold-related congestion better than allergic "
              "congestion.", "paraphrase"),
    ]),
    (10, "Elevation of the head at night may help as congestion is sometimes worse when lying down.", [
        ("c", "Keeping the head low at night may help, as congestion usually improves when lying down.",
         "location: elevation→low, worse→improves"),
        ("s", "Raising your head at night can help, because congestion may get worse when you lie down.",
         "paraphrase: hedged"),
    ]),
    (11, "Lutein is found in high concentration in the retina, which is the light sensitive area of the eye.", [
        ("c", "Lutein is present in only trace amounts in the retina, the light-sensitive area of the eye.",
         "quantity: high concentration→trace amounts"),
        ("s", "The retina, the eye's light-sensitive part, holds a high concentration of lutein.", "paraphrase"),
    ]),
    (13, "Stop using the medication and contact your doctor if you have one of these symptoms: light-headedness "
         "(as if you are about to pass out), slow heartbeats, seizure, jaundice (yellowing of skin or eyes), "
         "confusion or memory loss, or skin changes in the area of injection if medication is injected.", [
        ("c", "Keep using the medication and wait for it to pass if you have light-headedness, slow heartbeats, a "
              "seizure, jaundice, confusion or memory loss.", "action: stop→keep using"),
        ("s", "If you get light-headedness, slow heartbeats, a seizure, jaundice, confusion or memory loss, stop "
              "the medication and call your doctor.", "paraphrase"),
    ]),
    (14, "OTC pyridoxine (vitamin B6) can treat pregnancy-related nausea.", [
        ("c", "Over-the-counter pyridoxine (vitamin B6) is contraindicated for nausea in pregnancy.",
         "pregnancy: can treat→contraindicated"),
        ("s", "Vitamin B6 (pyridoxine), sold over the counter, can be used for nausea in pregnancy.", "paraphrase"),
    ]),
    (15, "These drugs have a different mechanism of action and more tolerable adverse effects compared to other "
         "anti-anxiolytic drugs.", [
        ("c", "These drugs have harsher, harder-to-tolerate adverse effects than other anti-anxiety drugs.",
         "comparison: more tolerable→harder to tolerate"),
        ("s", "Compared with other anti-anxiety drugs, these work differently and their side effects are easier "
              "to tolerate.", "paraphrase"),
    ]),
    (16, "Back pain associated with your period can start a few days before your period starts and get better "
         "after your period is over.", [
        ("c", "Period-related back pain usually begins a few days after your period ends and gets worse over the "
              "following weeks.", "timing: before→after period, better→worse"),
        ("s", "Period-related back pain may begin a few days before menstruation and ease once the period has "
              "finished.", "paraphrase"),
    ]),
    (17, "As this drug goes through metabolism in the liver, the effect of the drug and the possible side effects "
         "may be increased in patients suffering from liver diseases.", [
        ("c", "Because this drug is metabolised in the liver, its effect and side effects may be weaker in "
              "patients with liver disease.", "direction: increased→weaker"),
        ("s", "Since the liver metabolises this drug, people with liver disease may experience stronger effects "
              "and more side effects.", "paraphrase: same direction, increased→stronger"),
    ]),
    (18, "Diphenhydramine (Benadryl) is a first generation antihistamine and frequently causes sedation, while "
         "loratadine (Claritin) is a second generation antihistamine and is less likely to cause sedation.", [
        ("c", "Loratadine (Claritin) frequently causes sedation, whereas diphenhydramine (Benadryl) is the "
              "antihistamine less likely to make you drowsy.", "hard: drugs' roles swapped"),
        ("s", "Benadryl, a first-generation antihistamine, often causes drowsiness, while Claritin, a "
              "second-generation one, is less likely to.", "paraphrase: both sides kept"),
    ]),
    (18, "Second-generation antihistamines also cause fewer cognitive side effects (such as reduced attention "
         "span or working memory).", [
        ("c", "Second-generation antihistamines also cause more cognitive side effects, such as reduced attention "
              "span or working memory.", "quantity: fewer→more"),
        ("s", "Cognitive side effects like poorer attention or working memory are less frequent with "
              "second-generation antihistamines.", "paraphrase"),
    ]),
    (19, "Acute epididymitis usually presents with pain, tenderness, and palpable swelling in one testicle.", [
        ("c", "Acute epididymitis usually presents as painless swelling of both testicles.",
         "laterality: one→both, painful→painless"),
        ("s", "Typically, acute epididymitis shows up as pain, tenderness and swelling you can feel in one "
              "testicle.", "paraphrase"),
    ]),
    (19, "In any case – acute testicular pain should not be ignored and should be evaluated by a physician.", [
        ("c", "Acute testicular pain can safely be ignored and left to settle by itself.",
         "action: seek evaluation→ignore"),
        ("s", "Sudden testicular pain should always be checked by a doctor.", "paraphrase"),
    ]),
    (20, "Although its mechanism of action is still being studied, it has been shown to impair multiple "
         "proinflammatory processes, such as neutrophil recruitment, and decrease levels of proinflammatory "
         "cytokines.", [
        ("c", "It has been shown to boost proinflammatory processes such as neutrophil recruitment and to raise "
              "levels of proinflammatory cytokines.", "direction: impair/decrease→boost/raise"),
        ("s", "Its mechanism is still under study, but it is known to dampen several proinflammatory processes, "
              "including neutrophil recruitment, and to lower proinflammatory cytokines.", "paraphrase"),
    ]),
    (21, "This drug should only be considered in those with multiple allergies to the standard treatment.", [
        ("c", "This drug is the first choice for everyone, whatever their allergies to the standard treatment.",
         "rank: last resort→first choice"),
        ("s", "Clindamycin is reserved for people who are allergic to several of the standard treatments.",
         "paraphrase"),
    ]),
    (22, "Cetirizine (Zyrtec) and diphenhydramine (Benedryl) are both antihistamine medications and taking both "
         "together may increase the risk of side effects such as drowsiness, dizziness, and impaired "
         "coordination.", [
        ("c", "Cetirizine and diphenhydramine are both antihistamines, and taking them together lowers the risk of "
              "side effects like drowsiness, dizziness and poor coordination.", "direction: increase→lower"),
        ("s", "Combining cetirizine with diphenhydramine, two antihistamines, can make side effects such as "
              "drowsiness, dizziness and impaired coordination more likely.", "paraphrase"),
    ]),
    (23, "Isoniazid can increase the activity of liver enzymes, which results in Tylenol being converted to toxic "
         "metabolites, thus increasing the risk of liver damage.", [
        ("c", "Isoniazid dampens liver enzyme activity, so less Tylenol is turned into toxic metabolites and the "
              "risk of liver damage falls.", "direction: increase→dampen/fall"),
        ("s", "By boosting liver enzyme activity, isoniazid causes more Tylenol to become toxic metabolites, "
              "raising the risk of liver damage.", "paraphrase: same direction, increase→boost/raise"),
    ]),
    (23, "It is therefore recommended to take the two medications 2-3 hours apart from each other.", [
        ("c", "It is therefore recommended to swallow the two medications together at the same time.",
         "timing: apart→together"),
        ("s", "The two medicines should be spaced 2 to 3 hours apart.", "paraphrase"),
    ]),
    (26, "Diabetics need to be aware of the total carbohydrates consumed with each meal, as carbohydrates can "
         "raise blood sugar levels.", [
        ("c", "Diabetics can eat carbohydrates freely at meals, as carbohydrates bring blood sugar levels down.",
         "direction: raise→bring down"),
        ("s", "People with diabetes should keep track of the carbohydrates in each meal because carbohydrates can "
              "increase blood sugar.", "paraphrase: same direction, raise→increase"),
    ]),
    (27, "If your healthcare provider prescribes both antibiotics and painkillers, it is generally safe to take "
         "them together.", [
        ("c", "If your healthcare provider prescribes both antibiotics and painkillers, it is generally dangerous "
              "to take them together.", "safety: safe→dangerous"),
        ("c", "It is not safe to take prescribed antibiotics and painkillers together.", "negation: 'not' added"),
        ("s", "Taking prescribed antibiotics and painkillers at the same time is usually safe.",
         "paraphrase: hedge generally→usually"),
    ]),
    (28, "The typical pain associated with sinus infections is facial, cheek, upper back teeth, and ear pain, due "
         "to the location of the sinuses in the skull around the eyes, nose, and cheeks.", [
        ("c", "The typical pain of a sinus infection is in the lower front teeth, the neck and the chest.",
         "location: upper back teeth/face→lower front teeth/neck"),
        ("s", "Sinus infections usually cause pain in the face, cheeks, ears and upper back teeth, because the "
              "sinuses lie around the eyes, nose and cheeks.", "paraphrase"),
    ]),
    (28, "Continuous jugular vein distention can be a sign of serious heart or circulatory issues, including heart "
         "failure, heart valve diseases, and pulmonary hypertension.", [
        ("c", "Continuous jugular vein distention is a harmless finding unrelated to the heart or circulation.",
         "severity: serious→harmless"),
        ("s", "Persistent bulging of the jugular vein may point to serious heart or circulation problems such as "
              "heart failure, valve disease or pulmonary hypertension.", "paraphrase"),
    ]),
    (29, "However, insomnia should not be treated with medication alone, and long-term use should be approved by "
         "a doctor.", [
        ("c", "Medication alone is the recommended treatment for insomnia, and it can be taken long-term on your "
              "own initiative.", "action: medication alone discouraged→recommended"),
        ("s", "Medication should not be the only treatment for insomnia, and a doctor should approve long-term "
              "use.", "paraphrase: negation kept"),
    ]),
    (31, "An acute sinus infection, also known as sinusitis, is usually self limited and do not require treatment "
         "with antibiotics.", [
        ("c", "An acute sinus infection usually lingers until it is treated with antibiotics.",
         "hard: self-limited→lingers until antibiotics (restructured)"),
        ("s", "Acute sinusitis usually clears up on its own without antibiotics.", "paraphrase"),
    ]),
    (32, "It is available only with a prescription and can be found in several formulations including cream, "
         "ointment, shampoo, spray, and lotion.", [
        ("c", "It is sold over the counter in cream, ointment, shampoo, spray and lotion forms.",
         "access: prescription-only→over the counter"),
        ("c", "Clobetasol does not need a prescription.", "negation: 'not' added"),
        ("s", "Clobetasol needs a prescription and comes as a cream, ointment, shampoo, spray or lotion.",
         "paraphrase"),
    ]),
    (32, "However, prolonged use of clobetasol cream can lead to skin thinning, dryness, and discomfort, so it is "
         "recommended to use it for only two consecutive weeks.", [
        ("c", "Prolonged use of clobetasol cream thickens and moisturises the skin, so it is recommended for "
              "continuous long-term use.", "direction+duration: thinning→thickens, two weeks→long-term"),
        ("s", "Because long use of clobetasol cream can thin and dry the skin, it should be used for no more than "
              "two weeks in a row.", "paraphrase"),
    ]),
    (33, "It is divided into two main types: type 1, which typically starts in childhood and is caused by the "
         "body's immune system attacking the pancreas, and type 2, which usually starts in adulthood and is caused "
         "by a combination of genetic and lifestyle factors.", [
        ("c", "Type 2 diabetes typically starts in childhood when the immune system attacks the pancreas, whereas "
              "type 1 usually begins in adulthood from genetic and lifestyle factors.", "hard: types' roles swapped"),
        ("s", "Type 1 diabetes usually begins in childhood and comes from an immune attack on the pancreas; type 2 "
              "usually begins in adulthood and results from genes plus lifestyle.", "paraphrase"),
    ]),
    (33, "Diabetes mellitus type 2 usually progresses over years, and the majority of patients are asymptomatic "
         "at presentation.", [
        ("c", "Type 2 diabetes usually develops within a few days, and most patients have marked symptoms when "
              "they first present.", "speed: years→days, asymptomatic→symptomatic"),
        ("s", "Type 2 diabetes typically develops slowly over years, and most patients have no symptoms when "
              "first diagnosed.", "paraphrase"),
    ]),
    (34, "Neck muscle stiffness while swallowing is not commonly associated with esophagitis.", [
        ("c", "Neck muscle stiffness while swallowing is a typical symptom of esophagitis.",
         "frequency: uncommon→typical"),
        ("c", "Neck muscle stiffness while swallowing is commonly associated with esophagitis.",
         "negation: 'not' removed"),
        ("s", "Esophagitis seldom causes neck muscle stiffness when swallowing.", "paraphrase"),
    ]),
    (35, "Sertraline can have side-effects, including sexual-related effects such as lower sex drive and erectile "
         "dysfunction.", [
        ("c", "Sertraline tends to heighten sex drive and improve erections.", "direction: lower→heighten"),
        ("s", "Side effects of sertraline can include sexual effects like reduced libido and erectile "
              "dysfunction.", "paraphrase: same direction, lower→reduced"),
    ]),
    (36, "Long-term memory and procedural memory are less affected.", [
        ("c", "Long-term memory and procedural memory are the most affected.", "comparison: less→most"),
        ("s", "Depression affects long-term and procedural memory to a lesser degree.", "paraphrase"),
    ]),
    (37, "For patients without common symptoms of a sexually transmitted disease or a suspected exposure, "
         "establishing the diagnosis with a positive test result is necessary prior to the initialization of "
         "treatment.", [
        ("c", "For patients with no symptoms or suspected exposure, treatment should start first and testing can "
              "follow afterwards.", "timing: test before→after treatment"),
        ("s", "If a patient has neither typical STD symptoms nor a suspected exposure, a positive test must confirm "
              "the diagnosis before treatment begins.", "paraphrase"),
    ]),
    (38, "Green bananas contain even more pectin and starch than ripe ones, making them even more beneficial.", [
        ("c", "Ripe bananas contain more pectin and starch than green ones, which makes ripe bananas the better "
              "choice.", "hard: comparison reversed (green↔ripe)"),
        ("s", "Unripe green bananas have more pectin and starch than ripe bananas, so they help even more.",
         "paraphrase"),
    ]),
    (38, "In addition, in cases of diarrhea, it is recommended to avoid dairy products since lactose, a type of "
         "sugar present in dairy, can worsen symptoms.", [
        ("c", "With diarrhea it is recommended to drink plenty of milk, since the lactose in dairy eases the "
              "symptoms.", "action: avoid→consume"),
        ("s", "During diarrhea it is best to stay away from dairy, because lactose can make the symptoms worse.",
         "paraphrase"),
    ]),
    (39, "For those with diabetes, it is important to change socks daily and avoid wearing socks that are "
         "constricting.", [
        ("c", "People with diabetes should choose snug, constricting socks and change them once a week.",
         "action: avoid→choose constricting, daily→weekly"),
        ("s", "People with diabetes should put on fresh socks every day and avoid tight socks.", "paraphrase"),
    ]),
    (40, "Mild anal fissures and hemorrhoids can heal with just supportive measures.", [
        ("c", "Even mild anal fissures and hemorrhoids need surgery to heal.", "treatment: supportive→surgery"),
        ("s", "Supportive care alone can be enough for mild anal fissures and hemorrhoids to heal.",
         "paraphrase"),
    ]),
    (40, "However, these are only intended for intermittent short-term use.", [
        ("c", "These are intended for continuous long-term use.", "duration: intermittent short-term→continuous "
                                                                   "long-term"),
        ("s", "They are meant to be used only briefly, on and off.", "paraphrase"),
    ]),
    (41, "However, there are sometimes symptoms preceding the headache such as aura, sensitivity to light or sound, "
         "and dizziness.", [
        ("c", "Symptoms such as aura, sensitivity to light or sound and dizziness only appear once the headache "
              "has ended.", "timing: preceding→after"),
        ("s", "Aura, light or sound sensitivity and dizziness can sometimes come before the headache.",
         "paraphrase"),
    ]),
    (43, "Common side effects include hyperactivity, restlessness, nervousness, and excitability.", [
        ("c", "Restlessness, nervousness and excitability are rare side effects of buspirone.",
         "frequency: common→rare"),
        ("s", "Common side effects of Buspar include restlessness, nervousness, excitability and hyperactivity.",
         "paraphrase"),
    ]),
    (43, "Less commonly, it may also cause hypoactivity, such as drowsiness and fatigue.", [
        ("c", "Drowsiness and fatigue are the most common side effects of buspirone.",
         "frequency: less common→most common"),
        ("s", "Occasionally it can cause drowsiness and fatigue as well.", "paraphrase"),
    ]),
    (44, "Male infertility has been reported in less than 1% of patients taking the drug while a similar "
         "association has not been found for female infertility.", [
        ("c", "Female infertility has been reported in under 1% of patients taking the drug, while male fertility "
              "appears unaffected.", "hard: male↔female swapped"),
        ("s", "Fewer than 1% of patients on the drug have reported male infertility, and no similar link is known "
              "for women.", "paraphrase"),
    ]),
    (44, "However, pregnant or breastfeeding women should consider alternatives due to the lack of safety "
         "information.", [
        ("c", "Allopurinol is a recommended choice for pregnant or breastfeeding women, given its established "
              "safety record.", "pregnancy: consider alternatives→recommended"),
        ("s", "Because safety data are lacking, women who are pregnant or breastfeeding should look at other "
              "options.", "paraphrase"),
    ]),
    (46, "Pneumonia is more severe with fever, fatigue, and difficulty breathing.", [
        ("c", "Pneumonia is the milder of the two, with less fever, fatigue and breathing difficulty.",
         "severity: more severe→milder"),
        ("s", "Pneumonia tends to be more serious, with fever, tiredness and trouble breathing.", "paraphrase"),
    ]),
    (46, "It's uncommon for bronchitis to turn into pneumonia, but it's possible - especially with bacterial "
         "bronchitis.", [
        ("c", "Bronchitis commonly turns into pneumonia.", "frequency: uncommon→commonly"),
        ("s", "Bronchitis only occasionally progresses to pneumonia, most often when it is bacterial.",
         "paraphrase"),
    ]),
    (48, "Although weight gain is not listed as a side effect of the drug, recent studies have shown that "
         "long-term use of Hydroxyzine is associated with weight gain.", [
        ("c", "Recent studies have shown that long-term use of hydroxyzine is associated with weight loss.",
         "direction: gain→loss"),
        ("s", "Weight gain is missing from the official side-effect list, but recent research links long-term "
              "hydroxyzine use to putting on weight.", "paraphrase"),
    ]),
    (48, "Presumably, the drug's sedative effect can lead to burning fewer calories throughout the day and slowing "
         "down digestion.", [
        ("c", "The drug's stimulating effect probably makes the body burn more calories and speeds up digestion.",
         "direction: fewer/slowing→more/speeding"),
        ("s", "The sedation it causes probably means fewer calories are burned during the day and digestion "
              "slows.", "paraphrase"),
    ]),
    (49, "When thyroid function is low, it can lead to a reduction in metabolic rate and modest weight gain.", [
        ("c", "When thyroid function is low, metabolism speeds up and people tend to lose weight.",
         "direction: reduction/gain→speeds up/lose"),
        ("s", "An underactive thyroid can slow metabolism and cause a small amount of weight gain.", "paraphrase"),
    ]),
    (50, "Metformin is relatively safe for patients without severe kidney dysfunction but can cause "
         "gastrointestinal side effects such as diarrhea, flatulence, nausea, and vomiting.", [
        ("c", "Metformin is particularly safe for patients with severe kidney dysfunction.",
         "population: without→with severe kidney dysfunction"),
        ("s", "In people whose kidneys are not severely impaired, metformin is fairly safe, although it may cause "
              "diarrhea, gas, nausea and vomiting.", "paraphrase"),
    ]),
    (50, "Rarely, Metformin can cause lactic acidosis which can be life-threatening.", [
        ("c", "Metformin frequently causes lactic acidosis, which is usually mild.",
         "frequency+severity: rarely→frequently, life-threatening→mild"),
        ("c", "Metformin never causes lactic acidosis.", "negation: 'never' added"),
        ("s", "In rare cases metformin leads to lactic acidosis, a potentially life-threatening condition.",
         "paraphrase"),
    ]),
    (51, "This test requires an 8-hour fast before a blood sample is taken.", [
        ("c", "You should eat a full meal shortly before the blood sample is taken for this test.",
         "food: fasting→full meal"),
        ("s", "You need to fast for 8 hours before the blood is drawn for this test.", "paraphrase"),
    ]),
    (53, "Breast engorgement is when breasts becomes hard, painful, and swollen because they’re overly full of "
         "breast milk.", [
        ("c", "Breast engorgement is when the breasts turn soft and shrink because they hold too little milk.",
         "direction: hard/swollen/overfull→soft/shrink/too little"),
        ("s", "Engorgement means the breasts are overfilled with milk and become hard, sore and swollen.",
         "paraphrase"),
    ]),
    (54, "Urine tests, including urinalysis and urine culture, are used to check for white blood cells and "
         "bacteria in the urine, since bacterial infections are the most common cause of epididymitis.", [
        ("c", "Bacterial infections are an unusual cause of epididymitis.", "frequency: most common→unusual"),
        ("s", "Because epididymitis is most often caused by bacteria, urinalysis and urine culture look for "
              "bacteria and white cells in the urine.", "paraphrase"),
    ]),
    (58, "Aphthous ulcers usually appear on non-keratinized surfaces, while herpes sores appear on keratinized "
         "surfaces.", [
        ("c", "Aphthous ulcers usually appear on keratinized surfaces, while herpes sores appear on non-keratinized "
              "ones.", "location: surfaces swapped"),
        ("s", "Herpes sores form on keratinized surfaces, whereas aphthous ulcers usually form on non-keratinized "
              "ones.", "paraphrase: both antonyms kept, order changed"),
    ]),
    (58, "Prodromal sensations are not common with aphthous ulcers, while burning or tingling sensations can "
         "often anticipate herpes lesions.", [
        ("c", "Burning or tingling before the sore appears is typical of aphthous ulcers and unusual before herpes "
              "lesions.", "hard: roles swapped (aphthous↔herpes)"),
        ("s", "Herpes lesions are often heralded by burning or tingling, which is uncommon before aphthous "
              "ulcers.", "paraphrase: both antonyms kept"),
    ]),
    (59, "It is advised to empty your bladder and avoid caffeine, nicotine, exercise, and other stimulants 30 "
         "minutes before measuring your blood pressure.", [
        ("c", "It is advised to have a coffee or some exercise in the 30 minutes before measuring your blood "
              "pressure.", "action: avoid→have"),
        ("s", "For 30 minutes before a blood pressure reading, skip caffeine, nicotine, exercise and other "
              "stimulants, and empty your bladder first.", "paraphrase"),
    ]),
    (59, "The cuff should fit snugly on your bare upper arm with the lower edge of the cuff 1 inch above the elbow "
         "crease.", [
        ("c", "The cuff should sit loosely on your forearm with its edge 1 inch below the elbow crease.",
         "location: upper arm→forearm, above→below"),
        ("s", "Wrap the cuff snugly around the bare upper arm, its lower edge one inch above the crease of the "
              "elbow.", "paraphrase"),
    ]),
    (59, "Your forearm should be laid on a flat surface with the palm of the hand facing up, and the upper arm at "
         "the same level as the heart.", [
        ("c", "Let your forearm hang down with the palm facing down, keeping the upper arm well below heart "
              "level.", "location: palm up→down, level→below heart"),
        ("s", "Rest your forearm on a flat surface, palm up, keeping the upper arm level with the heart.",
         "paraphrase"),
    ]),
    (60, "Postnasal drip is a common cause of chronic cough.", [
        ("c", "Postnasal drip is a rare cause of chronic cough.", "frequency: common→rare"),
        ("s", "Chronic cough is often caused by postnasal drip.", "paraphrase: restructured"),
    ]),
    (61, "Factors that increase the risk of otitis externa include swimming or other water exposure, trauma such "
         "as from excessive cleaning or aggressive scratching of the ear canal, devices that occlude the ear canal "
         "such as hearing aids or earphones, and dermatologic conditions such as psoriasis or atopic "
         "dermatitis.", [
        ("c", "Swimming and other water exposure protect against otitis externa.",
         "direction: increase risk→protect"),
        ("s", "Swimming or other exposure to water raises the risk of otitis externa.",
         "paraphrase: same direction, increase→raise"),
    ]),
    (62, "Low HRV is associated with increased risk of cardiovascular disease.", [
        ("c", "Low HRV is associated with a reduced risk of cardiovascular disease.", "direction: increased→reduced"),
        ("c", "Low HRV is not associated with any increase in cardiovascular risk.", "negation: 'not' added"),
        ("s", "A low heart rate variability goes along with a higher risk of heart and blood vessel disease.",
         "paraphrase"),
    ]),
    (62, "High HRV is associated with higher fitness levels and resilience to stress.", [
        ("c", "High HRV is associated with poor fitness and vulnerability to stress.",
         "direction: higher fitness/resilience→poor/vulnerable"),
        ("s", "People with high HRV tend to be fitter and cope better with stress.", "paraphrase"),
    ]),
    (63, "Treating PID as soon as symptoms start can prevent scarring and irreversible damage to reproductive "
         "organs.", [
        ("c", "Holding off treatment of PID until symptoms have settled is the way to prevent scarring of the "
              "reproductive organs.", "timing: prompt→delayed"),
        ("s", "Prompt treatment of PID once symptoms begin can prevent scarring and permanent damage to the "
              "reproductive organs.", "paraphrase"),
    ]),
    (63, "Sexual intercourse should be avoided until treatment is completed and symptoms are resolved.", [
        ("c", "Sexual intercourse can resume as soon as treatment starts, even while symptoms persist.",
         "timing: after completion→as soon as treatment starts"),
        ("s", "Hold off on sex until the treatment is finished and the symptoms have gone.", "paraphrase"),
    ]),
    (64, "Liraglutide is given daily due to faster elimination, while semaglutide is given weekly due to slower "
         "elimination.", [
        ("c", "Semaglutide is given daily because it is eliminated faster, while liraglutide is given weekly "
              "because it is eliminated more slowly.", "hard: drugs' roles swapped"),
        ("s", "Because liraglutide is cleared more quickly it is taken every day, whereas semaglutide, cleared "
              "more slowly, is taken once a week.", "paraphrase: both antonyms kept"),
    ]),
    (65, "To avoid the increased risk of these side effects, these drugs should not be taken simultaneously "
         "without a clear order from a healthcare provider.", [
        ("c", "These drugs are best taken at the same time, which cuts the risk of these side effects.",
         "action: avoid combining→combine"),
        ("c", "These drugs can be taken simultaneously without a clear order from a healthcare provider.",
         "negation: 'not' removed"),
        ("s", "Unless a healthcare provider clearly says so, ibuprofen and naproxen should not be taken together, "
              "because that raises the risk of side effects.", "paraphrase: negation kept"),
    ]),
    (66, "Shin splints are usually self-limited and have no long-term complications.", [
        ("c", "Shin splints usually persist and commonly lead to long-term complications.",
         "course: self-limited→persist"),
        ("c", "Shin splints are not self-limited and often leave long-term complications.",
         "negation: 'not' added"),
        ("s", "Shin splints generally resolve on their own without lasting complications.", "paraphrase"),
    ]),
    (66, "Recovery usually takes between 2-4 weeks, after which exercise can be gradually resumed.", [
        ("c", "Exercise should be resumed at full intensity within a day or two.", "timing: weeks/gradual→days/full"),
        ("s", "After roughly 2 to 4 weeks of recovery, you can slowly return to exercise.", "paraphrase"),
    ]),
    (67, "The initial effects of this drug as an aid for smoking cessation are usually observed within 7-8 days, "
         "and therefore it is common for your healthcare provider to start it 1-2 weeks before the scheduled "
         "smoking quit date.", [
        ("c", "It is common for your healthcare provider to start bupropion 1-2 weeks after the scheduled quit "
              "date.", "timing: before→after quit date"),
        ("s", "Since bupropion starts helping with quitting smoking within about a week, doctors often begin it "
              "one to two weeks ahead of the planned quit date.", "paraphrase"),
    ]),
    (68, "Longer recovering period is more common among elderly patients, or patients with chronic lung "
         "disease.", [
        ("c", "A long recovery is less common among elderly patients and those with chronic lung disease.",
         "comparison: more→less common"),
        ("s", "Elderly people and those with chronic lung disease are more likely to take longer to recover.",
         "paraphrase"),
    ]),
    (69, "The dose is then increased by 0.6 mg each week over the following 4 weeks until the daily maintenance "
         "dose of 3 mg is reached.", [
        ("c", "The dose is then cut by 0.6 mg each week over the following 4 weeks.", "direction: increased→cut"),
        ("s", "Over the next 4 weeks the dose goes up by 0.6 mg per week until reaching the 3 mg daily "
              "maintenance dose.", "paraphrase"),
    ]),
    (69, "This dosing schedule is used to minimize the risk of gastrointestinal side effects, such as nausea, "
         "vomiting, diarrhea, and constipation.", [
        ("c", "This dosing schedule tends to maximise gastrointestinal side effects such as nausea, vomiting, "
              "diarrhea and constipation.", "direction: minimize→maximise"),
        ("s", "The gradual schedule is meant to keep the risk of nausea, vomiting, diarrhea and constipation as "
              "low as possible.", "paraphrase"),
    ]),
    (70, "In severe kidney dysfunction, other drugs should be taken.", [
        ("c", "In severe kidney dysfunction, ibuprofen is the preferred drug.", "rank: use another→preferred"),
        ("s", "People with severe kidney dysfunction should use a different drug.", "paraphrase"),
    ]),
    (71, "The scientific data revolving around melatonin for treating sleep disorders is inconclusive regarding "
         "children and young adults and has shown efficacy mainly in older adults.", [
        ("c", "Melatonin has shown efficacy mainly in children and young adults, while the data for older adults "
              "are inconclusive.", "hard: age groups swapped"),
        ("s", "Evidence for melatonin in sleep disorders is mostly in older adults; for children and young adults "
              "it is inconclusive.", "paraphrase"),
    ]),
    (75, "Enlarged prostate is a common condition that predominantly affects men over 50.", [
        ("c", "An enlarged prostate is a rare condition that mainly affects men under 30.",
         "frequency+age: common→rare, over 50→under 30"),
        ("s", "An enlarged prostate is common and mostly affects men older than 50.", "paraphrase"),
    ]),
    (75, "In that population age, it is most commonly caused by benign prostatic hyperplasia (BPH) or, in rare "
         "cases, cancer.", [
        ("c", "In that age group, an enlarged prostate is most commonly caused by cancer and only rarely by "
              "benign hyperplasia.", "nature: benign↔malignant as the common cause"),
        ("s", "In men of that age the usual cause is benign prostatic hyperplasia, with cancer being a rare "
              "cause.", "paraphrase: both antonyms kept"),
    ]),
    (77, "However, they have limited efficacy in relieving symptoms of poison ivy.", [
        ("c", "They are highly effective at relieving poison ivy symptoms.", "quality: limited→highly effective"),
        ("s", "Antihistamines do little to relieve poison ivy symptoms.", "paraphrase"),
    ]),
    (78, "Using a numbing cream, such as 4% Lidocaine cream, can decrease the pain associated with blood drawing "
         "and might help to alleviate the fear of needles and blood draw.", [
        ("c", "A numbing cream such as 4% lidocaine tends to intensify the pain of a blood draw.",
         "direction: decrease→intensify"),
        ("s", "Applying a numbing cream like 4% lidocaine can make a blood draw less painful and may ease fear of "
              "needles.", "paraphrase"),
    ]),
    (79, "Doctors recommend that people over age 50 get vaccinated against the virus to reduce the risk of "
         "shingles.", [
        ("c", "Doctors advise people over age 50 to steer clear of the shingles vaccine.",
         "action: get vaccinated→steer clear"),
        ("c", "Doctors do not recommend the shingles vaccine for people over 50.", "negation: 'not' added"),
        ("s", "For people older than 50, doctors recommend vaccination to lower the chance of getting shingles.",
         "paraphrase: same direction, reduce→lower"),
    ]),
    (80, "Colchicine should be taken with food to reduce the risk of gastrointestinal side effects.", [
        ("c", "Colchicine should be taken on an empty stomach to reduce the risk of gastrointestinal side effects.",
         "food: with food→empty stomach"),
        ("c", "Colchicine should not be taken with food.", "negation: 'not' added"),
        ("s", "Take colchicine with a meal to lower the chance of stomach side effects.", "paraphrase"),
    ]),
    (80, "In addition, Patients should avoid eating grapefruit or drinking grapefruit juice while using "
         "colchicine.", [
        ("c", "Drinking grapefruit juice alongside colchicine is encouraged.", "action: avoid→encouraged"),
        ("s", "While on colchicine, stay away from grapefruit and grapefruit juice.", "paraphrase"),
    ]),
    (81, "It is generally recommended to take probiotics at least 2 hours after antibiotics.", [
        ("c", "It is generally recommended to take probiotics at least 2 hours before antibiotics.",
         "timing: after→before"),
        ("c", "Probiotics are best swallowed together with each antibiotic dose.",
         "hard: apart→together (restructured)"),
        ("s", "Probiotics are usually advised at least two hours after taking antibiotics.", "paraphrase"),
    ]),
    (82, "The antihypertensive effects of lisinopril are usually noticeable within a few hours of taking it "
         "orally.", [
        ("c", "The blood-pressure-lowering effect of lisinopril usually takes several weeks to become noticeable.",
         "timing: hours→weeks"),
        ("s", "Lisinopril usually starts lowering blood pressure within a few hours of an oral dose.",
         "paraphrase"),
    ]),
    (82, "While taking the daily dosage, the blood pressure should decrease, but it may still be higher than the "
         "normal range.", [
        ("c", "While taking the daily dosage, the blood pressure should rise above its starting level.",
         "direction: decrease→rise"),
        ("s", "On the daily dose blood pressure ought to come down, though it may remain above the normal range.",
         "paraphrase"),
    ]),
    (83, "Apply a small amount in a thin layer and stop treatment once the condition is resolved.", [
        ("c", "Apply a generous, thick layer and carry on with the treatment after the condition has resolved.",
         "action: stop→carry on, thin→thick"),
        ("s", "Use a small amount spread thinly, and stop once the condition has cleared up.", "paraphrase"),
    ]),
    (84, "Extended release trazadone is best taken before bedtime on an empty stomach, as it might cause "
         "drowsiness.", [
        ("c", "Extended-release trazodone is best taken in the morning with breakfast.",
         "time of day+food: bedtime/empty→morning/breakfast"),
        ("c", "Extended-release trazodone should never be taken at bedtime.", "negation: 'never' added"),
        ("s", "Because it may make you drowsy, extended-release trazodone is best taken at bedtime on an empty "
              "stomach.", "paraphrase"),
    ]),
    (84, "Immediate-release Trazodone is best taken with or shortly after a meal to reduce gastrointestinal "
         "adverse reactions, lightheadedness, and postural hypotension.", [
        ("c", "Immediate-release trazodone is best taken on an empty stomach, well before meals.",
         "food: with/after meal→empty stomach/before meals"),
        ("s", "Taking immediate-release trazodone with food reduces stomach upset, lightheadedness and postural "
              "hypotension.", "paraphrase: compatible subset (with or shortly after→with)"),
    ]),
    (85, "Bacterial vaginosis (BV) is a common infectious vaginal pathology for which Metronidazole (Flagyl) is the "
         "first line treatment.", [
        ("c", "Metronidazole (Flagyl) is a last-resort treatment for bacterial vaginosis, kept for when everything "
              "else fails.", "rank: first-line→last resort"),
        ("c", "Metronidazole is not a first-line treatment for bacterial vaginosis.", "negation: 'not' added"),
        ("s", "Metronidazole (Flagyl) is the first-choice treatment for bacterial vaginosis, a common vaginal "
              "infection.", "paraphrase"),
    ]),
    (87, "It is typically recommended to avoid abruptly discontinuing selective serotonin reuptake inhibitors "
         "(SSRIs) as this may result in unpleasant withdrawal symptoms.", [
        ("c", "It is typically recommended to stop SSRIs abruptly, because tapering them brings on unpleasant "
              "withdrawal symptoms.", "hard: avoid abrupt stop→recommend it, cause moved"),
        ("s", "Stopping an SSRI suddenly is generally discouraged because it can cause unpleasant withdrawal "
              "symptoms.", "paraphrase"),
    ]),
    (87, "While Prozac has a lower risk of such symptoms, it is still advisable to gradually reduce doses of 20mg "
         "over a period of 1-2 weeks before stopping completely.", [
        ("c", "Prozac carries a higher risk of withdrawal symptoms than other SSRIs.", "comparison: lower→higher"),
        ("s", "Although Prozac is less likely to cause withdrawal symptoms, it is still best to taper it gradually "
              "over 1-2 weeks before stopping.", "paraphrase"),
    ]),
    (88, "Mild strains can cause discomfort lasting from several days to several weeks, while severe strains can "
         "last for months.", [
        ("c", "Severe strains usually settle within days, whereas mild strains can last for months.",
         "hard: mild↔severe swapped"),
        ("s", "A mild strain may hurt for days to weeks; a severe one can take months.",
         "paraphrase: both antonyms kept"),
    ]),
    (88, "To reduce symptoms, rest the muscle, apply ice to the affected area, wrap the muscle with an elastic "
         "bandage, and take medication to relieve pain and swelling.", [
        ("c", "To reduce symptoms, keep working the muscle hard and apply heat to the affected area.",
         "action: rest/ice→work/heat"),
        ("s", "Resting the muscle, icing it, wrapping it in an elastic bandage and taking pain and swelling "
              "medication can ease symptoms.", "paraphrase"),
    ]),
    (89, "Creatinine levels that are high in the blood and low in urine may indicate kidney problems.", [
        ("c", "Creatinine levels that are low in the blood and high in urine may indicate kidney problems.",
         "direction: high/low swapped"),
        ("s", "High blood creatinine together with low urine creatinine can be a sign of kidney trouble.",
         "paraphrase: both antonyms kept"),
    ]),
    (89, "It's worth noting that intense exercise and some medications can lead to temporarily elevated serum "
         "creatinine levels.", [
        ("c", "Intense exercise and some medications can temporarily lower serum creatinine levels.",
         "direction: elevated→lower"),
        ("s", "Strenuous exercise and certain drugs can raise serum creatinine for a while.",
         "paraphrase: same direction, elevated→raise"),
    ]),
    (90, "Typically, cold sores will resolve by themselves within a few days, but you can take medication to "
         "alleviate symptoms, such as local topical anesthetics like lidocaine.", [
        ("c", "Cold sores typically persist for months unless they are treated with medication.",
         "course: resolve in days→persist for months"),
        ("s", "Cold sores usually clear up on their own within a few days, and medicines like topical lidocaine "
              "can ease the symptoms.", "paraphrase"),
    ]),
    (91, "If topical antifungal therapy doesn't work or the infection is severe, your doctor may prescribe oral "
         "systemic antifungal therapy, with drugs like terbinafine and itraconazole.", [
        ("c", "Oral antifungals such as terbinafine and itraconazole are the first step, and topical creams are "
              "kept for severe infections.", "hard: order of treatments reversed"),
        ("s", "When a topical antifungal fails or the infection is severe, a doctor may prescribe oral antifungals "
              "such as terbinafine or itraconazole.", "paraphrase"),
    ]),
    (92, "The added-on compound of clavulanic acid inhibits some of these mechanisms which results in amoxicillin "
         "having a broader spectrum of anti-bacterial activity.", [
        ("c", "Adding clavulanic acid narrows amoxicillin's spectrum of antibacterial activity.",
         "direction: broader→narrows"),
        ("s", "Clavulanic acid blocks some of these resistance mechanisms, so amoxicillin covers a wider range of "
              "bacteria.", "paraphrase"),
    ]),
    (93, "Both Buspirone (Buspar) and Sertraline (Zoloft) elevate the serotonin levels in the brain.", [
        ("c", "Both buspirone and sertraline lower serotonin levels in the brain.", "direction: elevate→lower"),
        ("c", "Neither buspirone nor sertraline raises serotonin levels in the brain.", "negation: 'neither/nor'"),
        ("s", "Buspar and Zoloft both increase brain serotonin levels.", "paraphrase: same direction, "
                                                                         "elevate→increase"),
    ]),
    (96, "Isotretinoin (Accutane) is a form of vitamin A that helps to reduce the amount of oil produced by your "
         "skin's oil glands, but it's not an antibiotic.", [
        ("c", "Isotretinoin (Accutane) makes the skin's oil glands produce more oil.", "direction: reduce→more"),
        ("s", "Accutane, a vitamin A derivative, cuts down the oil made by the skin's glands and is not an "
              "antibiotic.", "paraphrase"),
    ]),
    (96, "It's important to note that this medication can cause severe birth defects or even fetus death if taken "
         "during pregnancy.", [
        ("c", "This medication is considered safe to take during pregnancy.", "pregnancy: harmful→safe"),
        ("s", "Taken in pregnancy, isotretinoin can cause serious birth defects or fetal death.", "paraphrase"),
    ]),
    (97, "Therefore, blepharitis is not a contagious disease.", [
        ("c", "Blepharitis therefore spreads easily from person to person.", "hard: not contagious→spreads easily"),
        ("s", "So blepharitis cannot be passed to other people.", "paraphrase"),
    ]),
    (98, "The illness is self-limited in individuals under 65 years of age who are normally healthy.", [
        ("c", "In normally healthy people under 65, the illness tends to become chronic.",
         "course: self-limited→chronic"),
        ("s", "In otherwise healthy people younger than 65, flu resolves on its own.", "paraphrase"),
    ]),
    (104, "While antihistamines can pass into breast milk, second-generation antihistamines are considered safe "
          "for breastfeeding mothers compared to first-generation antihistamines.", [
        ("c", "First-generation antihistamines are considered the safer choice for breastfeeding mothers compared "
              "with second-generation ones.", "hard: generations swapped"),
        ("c", "Second-generation antihistamines are not considered safe for breastfeeding mothers.",
         "negation: 'not' added"),
        ("s", "Compared with first-generation antihistamines, second-generation ones are regarded as safe during "
              "breastfeeding, even though antihistamines can reach breast milk.", "paraphrase"),
    ]),
    (104, "It is recommended to take the lowest effective dose and observe the infant for any signs of "
          "irritability, jitteriness, or drowsiness.", [
        ("c", "It is recommended to take the highest available dose while breastfeeding.",
         "quantity: lowest→highest dose"),
        ("s", "Use the smallest dose that works and watch the baby for irritability, jitteriness or drowsiness.",
         "paraphrase"),
    ]),
    (105, "It is common for decreased levels of lipase to be connected to chronic pancreatitis or cystic "
          "fibrosis.", [
        ("c", "Low lipase levels are seldom connected to chronic pancreatitis or cystic fibrosis.",
         "frequency: common→seldom"),
        ("s", "Low lipase is commonly linked to chronic pancreatitis or cystic fibrosis.", "paraphrase"),
    ]),
    (106, "Meloxicam is only available with a prescription, whereas Naproxen can be found over-the-counter "
          "(OTC).", [
        ("c", "Naproxen is only available with a prescription, whereas meloxicam can be bought over the counter.",
         "hard: drugs' roles swapped"),
        ("s", "You need a prescription for meloxicam, but naproxen is sold over the counter.", "paraphrase"),
    ]),
    (106, "Meloxicam has a longer duration of action than Naproxen.", [
        ("c", "Meloxicam has a shorter duration of action than naproxen.", "comparison: longer→shorter"),
        ("s", "Naproxen's effect wears off sooner than meloxicam's.", "paraphrase: comparison restructured"),
    ]),
    (106, "Therefore, meloxicam is usually taken once a day, whereas Naproxen requires more frequent dosing.", [
        ("c", "Meloxicam has to be taken several times a day, whereas naproxen is usually taken once daily.",
         "hard: dosing frequencies swapped"),
        ("s", "Meloxicam is typically a once-daily drug, while naproxen needs to be taken more often.",
         "paraphrase"),
    ]),
    (107, "Mycophenolate mofetil, also known as Cellcept or Myfortic, is a medication that suppresses the immune "
          "system.", [
        ("c", "Mycophenolate mofetil (CellCept) is a medication that strengthens the immune system.",
         "direction: suppresses→strengthens"),
        ("s", "CellCept (mycophenolate mofetil) is a drug that dampens the immune system.", "paraphrase"),
    ]),
    (109, "This rash is not contagious and cannot be transferred between people.", [
        ("c", "This rash is highly contagious and passes easily between people.",
         "hard: not contagious→highly contagious"),
        ("c", "This rash is contagious and can be transferred between people.", "negation: 'not' removed"),
        ("s", "The rash does not spread from one person to another.", "paraphrase"),
    ]),
    (110, "It is important to know that while Phenazopyridine is effective in helping with the pain caused by "
          "urinary tract infections, it is ineffective in treating the infection.", [
        ("c", "Phenazopyridine cures the urinary tract infection itself, though it does little for the pain.",
         "hard: effective/ineffective targets swapped"),
        ("s", "Phenazopyridine eases UTI pain but does nothing against the infection.", "paraphrase"),
    ]),
    (110, "Phenazopyridine (Pyridium) is a medication commonly used to treat pain from urinary tract infections, "
          "and a common and harmless side effect of this drug is orange-colored urine.", [
        ("c", "Orange-colored urine on phenazopyridine is a rare and dangerous side effect.",
         "frequency+severity: common/harmless→rare/dangerous"),
        ("s", "Orange urine is a frequent, harmless effect of phenazopyridine (Pyridium), which is used for UTI "
              "pain.", "paraphrase"),
    ]),
    (111, "It mimics the action of GLP-1 hormone, enhancing insulin release, decreasing liver glucose production, "
          "reducing appetite, and slowing gastric emptying.", [
        ("c", "It mimics GLP-1, suppressing insulin release, raising liver glucose output, increasing appetite and "
              "speeding up gastric emptying.", "direction: every effect reversed"),
        ("s", "Acting like the GLP-1 hormone, it boosts insulin release, cuts glucose production by the liver, "
              "curbs appetite and slows stomach emptying.", "paraphrase"),
    ]),
    (113, "However, the American Academy of Pediatrics (AAP) advises against using baby powder due to potential "
          "harmful effects from talc inhalation and carcinogens that may be present in some products.", [
        ("c", "The American Academy of Pediatrics recommends using baby powder routinely on infants.",
         "action: advises against→recommends"),
        ("s", "The AAP discourages baby powder because inhaled talc and possible carcinogens in some products "
              "could be harmful.", "paraphrase"),
    ]),
    (114, "Prescription topical vasodilators such as topical nitroglycerin or topical nifedipine, with or without "
          "topical analgesics like Lidocaine, can be used to treat anal fissures.", [
        ("c", "Topical vasodilators such as nitroglycerin or nifedipine must never be used for anal fissures.",
         "negation: 'never' added"),
        ("s", "Anal fissures can be treated with a topical vasodilator such as nitroglycerin together with a "
              "topical analgesic like lidocaine.", "paraphrase: compatible subset (with or without→with)"),
    ]),
    (115, "If urine appears to be colorless, it most commonly indicates that someone has been drinking too much "
          "water.", [
        ("c", "Colorless urine most commonly means someone is dehydrated from drinking too little water.",
         "quantity: too much→too little water"),
        ("s", "Colorless urine is most often a sign of drinking a lot of water.", "paraphrase"),
    ]),
    (116, "Additionally, it's important only to use hydrocortisone cream for a maximum of two weeks.", [
        ("c", "Hydrocortisone cream needs to be used for at least several months to work.",
         "duration: maximum two weeks→at least months"),
        ("s", "Don't use hydrocortisone cream for longer than two weeks.", "paraphrase"),
    ]),
    (117, "The safest method is cross-tapering over a period of one to four weeks, gradually reducing the dose of "
          "Duloxetine (Cymbalta) to zero while simultaneously increasing the dosage of Sertraline (Zoloft) to the "
          "therapeutic range.", [
        ("c", "The safest method is to gradually increase the duloxetine dose while bringing sertraline down to "
              "zero.", "hard: drugs' directions swapped"),
        ("s", "Cross-tapering over one to four weeks is safest: Cymbalta is lowered step by step to zero as Zoloft "
              "is raised to a therapeutic dose.", "paraphrase: both antonyms kept"),
    ]),
    (120, "Fainting is a brief loss of consciousness caused by a sudden drop in blood flow to the brain.", [
        ("c", "Fainting is caused by a sudden surge of blood flow to the brain.", "direction: drop→surge"),
        ("s", "Fainting is a short loss of consciousness due to a sudden fall in blood flow to the brain.",
         "paraphrase"),
    ]),
    (120, "These include lying down if possible, sitting and placing your head between your knees, squeezing your "
          "thighs together, and crossing your legs and arms.", [
        ("c", "These include standing up quickly and holding your head high.", "action: lie down→stand up quickly"),
        ("s", "Lying down, sitting with your head between your knees, squeezing your thighs together and crossing "
              "your arms and legs can help.", "paraphrase"),
    ]),
    (121, "It is important to note that OTC pain relievers should only be used for a brief period before "
          "consulting with a healthcare provider for further evaluation and treatment.", [
        ("c", "OTC pain relievers can be used for months on end before there is any need to see a healthcare "
              "provider.", "duration: brief→months"),
        ("s", "Over-the-counter painkillers are for short use only; after that, see a healthcare provider.",
         "paraphrase"),
    ]),
    (122, "Acute bronchitis is characterized by an onset of persistent cough with or without sputum production.", [
        ("c", "Acute bronchitis is characterized by a brief, fleeting cough.", "duration: persistent→fleeting"),
        ("s", "Acute bronchitis can bring a persistent cough that produces sputum.",
         "paraphrase: compatible subset (with or without→with)"),
    ]),
    (122, "There are rare cases of bacterial acute bronchitis – in which antibiotic treatment is needed.", [
        ("c", "Acute bronchitis is usually bacterial and needs antibiotics.", "frequency: rare→usually"),
        ("s", "Occasionally acute bronchitis is bacterial, and then antibiotics are required.", "paraphrase"),
    ]),
    (123, "One possible side effect is excessive hair growth, which disappears after treatment.", [
        ("c", "One possible side effect is hair loss that persists after treatment.",
         "direction: hair growth→hair loss, disappears→persists"),
        ("s", "It can cause excessive hair growth, which goes away once treatment ends.", "paraphrase"),
    ]),
    (124, "Warm sitz baths after bowel movements can give temporary symptomatic relief.", [
        ("c", "Warm sitz baths before bowel movements give permanent relief.",
         "timing+duration: after→before, temporary→permanent"),
        ("s", "A warm sitz bath after a bowel movement can ease symptoms for a while.", "paraphrase"),
    ]),
    (125, "Avoiding exposure to irritants, such as smoke, and avoiding dry air by increasing the humidity in the "
          "surrounding environment may also be of benefit.", [
        ("c", "Keeping the surrounding air dry by lowering the humidity may also help.",
         "direction: increasing→lowering humidity"),
        ("s", "Staying away from smoke and keeping the air moist with higher humidity may help as well.",
         "paraphrase"),
    ]),
]

# (paragraph, evidence sentence, claims): patient-leaflet paragraphs written for this set.
LEAFLETS: list[tuple[str, str, list[tuple[str, str, str]]]] = []


def _leaflet(paragraph: str, *items: tuple[str, list[tuple[str, str, str]]]) -> None:
    for sentence, claims in items:
        LEAFLETS.append((paragraph, sentence, claims))


_leaflet(
    "Take omeprazole once a day, 30 to 60 minutes before breakfast. Swallow the capsule whole with a glass of "
    "water. Tell your doctor if you have black stools or you are vomiting blood.",
    ("Take omeprazole once a day, 30 to 60 minutes before breakfast.", [
        ("c", "Take omeprazole once a day, shortly after breakfast.", "timing: before→after meals"),
        ("s", "Omeprazole is taken daily, half an hour to an hour ahead of breakfast.", "paraphrase"),
    ]),
    ("Swallow the capsule whole with a glass of water.", [
        ("c", "Crush or chew the capsule before swallowing it.", "action: swallow whole→crush/chew"),
        ("s", "The capsule should be swallowed whole, with a glass of water.", "paraphrase"),
    ]),
)
_leaflet(
    "Ibuprofen can be taken with or without food, but taking it with food or milk may reduce stomach upset. Do "
    "not take ibuprofen if you have ever had a stomach ulcer. Ibuprofen can raise blood pressure in some people.",
    ("Ibuprofen can be taken with or without food, but taking it with food or milk may reduce stomach upset.", [
        ("c", "Ibuprofen has to be taken on an empty stomach.", "food: with or without→empty stomach only"),
        ("s", "You can take ibuprofen with food.", "paraphrase: compatible subset (with or without→with)"),
        ("s", "Taking ibuprofen with a meal or some milk can help prevent an upset stomach.", "paraphrase"),
    ]),
    ("Do not take ibuprofen if you have ever had a stomach ulcer.", [
        ("c", "Ibuprofen is a good choice for people who have had a stomach ulcer.",
         "safety: contraindicated→good choice"),
        ("s", "People who have had a stomach ulcer should avoid ibuprofen.", "paraphrase"),
    ]),
    ("Ibuprofen can raise blood pressure in some people.", [
        ("c", "Ibuprofen tends to lower blood pressure.", "direction: raise→lower blood pressure"),
        ("s", "In some people ibuprofen may increase blood pressure.", "paraphrase: same direction, raise→increase"),
    ]),
)
_leaflet(
    "Keep taking warfarin every day unless your anticoagulation clinic tells you to stop. Before any surgery or "
    "dental work, tell the surgeon or dentist that you take warfarin. Avoid large changes in the amount of green "
    "leafy vegetables you eat.",
    ("Keep taking warfarin every day unless your anticoagulation clinic tells you to stop.", [
        ("c", "You can stop warfarin on your own once you feel better.", "action: continue→stop blood thinner"),
        ("s", "Continue your daily warfarin until the anticoagulation clinic advises you to stop.", "paraphrase"),
    ]),
    ("Avoid large changes in the amount of green leafy vegetables you eat.", [
        ("c", "Large swings in how many green leafy vegetables you eat are harmless while on warfarin.",
         "hard: avoid changes→changes harmless"),
        ("s", "Try to keep the amount of leafy green vegetables you eat steady.", "paraphrase"),
    ]),
)
_leaflet(
    "Take metformin with or just after a meal to reduce stomach side effects. Stomach upset is common in the "
    "first weeks and usually gets better over time. Lactic acidosis is a rare but serious side effect.",
    ("Take metformin with or just after a meal to reduce stomach side effects.", [
        ("c", "Take metformin at least an hour before meals, on an empty stomach.", "food: with meal→empty stomach"),
        ("s", "Metformin is best taken with food or straight after eating to limit stomach upset.", "paraphrase"),
    ]),
    ("Stomach upset is common in the first weeks and usually gets better over time.", [
        ("c", "Stomach upset is rare at first and tends to get worse the longer you take it.",
         "frequency+course: common/better→rare/worse"),
        ("s", "An upset stomach often happens in the first few weeks and generally improves.", "paraphrase"),
    ]),
    ("Lactic acidosis is a rare but serious side effect.", [
        ("c", "Lactic acidosis is a common and mild side effect.", "frequency+severity: rare/serious→common/mild"),
        ("s", "Lactic acidosis seldom happens, but it is serious when it does.", "paraphrase"),
    ]),
)
_leaflet(
    "Promethazine can make you very sleepy. Do not drive or use machines until you know how it affects you. The "
    "sleepiness may be worse if you drink alcohol.",
    ("Promethazine can make you very sleepy.", [
        ("c", "Promethazine keeps you alert and wide awake.", "direction: sleepy→alert"),
        ("s", "Promethazine may cause marked drowsiness.", "paraphrase"),
    ]),
    ("Do not drive or use machines until you know how it affects you.", [
        ("c", "It is safe to drive straight after taking promethazine.", "safety: do not drive→safe to drive"),
        ("s", "Wait until you know how promethazine affects you before driving or operating machinery.",
         "paraphrase"),
    ]),
    ("The sleepiness may be worse if you drink alcohol.", [
        ("c", "Alcohol counteracts the sleepiness caused by promethazine.", "hard: worse→counteracts"),
        ("s", "Drinking alcohol can make the sleepiness stronger.", "paraphrase: hedged"),
    ]),
)
_leaflet(
    "Take levothyroxine in the morning on an empty stomach, at least 30 minutes before breakfast. Calcium and "
    "iron supplements reduce its absorption, so take them at least 4 hours apart.",
    ("Take levothyroxine in the morning on an empty stomach, at least 30 minutes before breakfast.", [
        ("c", "Take levothyroxine in the evening, together with your dinner.",
         "time of day+food: morning/empty→evening/with dinner"),
        ("s", "Levothyroxine should be taken first thing in the morning, half an hour or more before eating.",
         "paraphrase"),
    ]),
    ("Calcium and iron supplements reduce its absorption, so take them at least 4 hours apart.", [
        ("c", "Calcium and iron supplements improve its absorption, so take them at the same time.",
         "direction: reduce→improve, apart→together"),
        ("s", "Separate calcium or iron supplements from levothyroxine by 4 hours or more, because they lower how "
              "much is absorbed.", "paraphrase"),
    ]),
)
_leaflet(
    "Folic acid is recommended for women who are trying to get pregnant and during the first 12 weeks of "
    "pregnancy. It lowers the risk of neural tube defects such as spina bifida.",
    ("Folic acid is recommended for women who are trying to get pregnant and during the first 12 weeks of "
     "pregnancy.", [
        ("c", "Folic acid should be avoided by women who are trying to get pregnant and in the first 12 weeks of "
              "pregnancy.", "pregnancy: recommended→avoided"),
        ("s", "Women planning a pregnancy, and those in the first 12 weeks, are advised to take folic acid.",
         "paraphrase"),
    ]),
    ("It lowers the risk of neural tube defects such as spina bifida.", [
        ("c", "It raises the risk of neural tube defects such as spina bifida.", "direction: lowers→raises"),
        ("s", "It reduces the chance of neural tube defects like spina bifida.",
         "paraphrase: same direction, lowers→reduces"),
    ]),
)
_leaflet(
    "Ramipril must not be used in pregnancy because it can harm the baby. If you become pregnant while taking "
    "ramipril, tell your doctor straight away. A dry, tickly cough is a common side effect.",
    ("Ramipril must not be used in pregnancy because it can harm the baby.", [
        ("c", "Ramipril is recommended in pregnancy because it protects the baby.",
         "pregnancy: contraindicated→recommended"),
        ("s", "Ramipril is contraindicated during pregnancy since it can harm the unborn baby.", "paraphrase"),
    ]),
    ("A dry, tickly cough is a common side effect.", [
        ("c", "A dry, tickly cough is a rare side effect of ramipril.", "frequency: common→rare"),
        ("s", "Many people on ramipril get a dry, irritating cough.", "paraphrase"),
    ]),
)
_leaflet(
    "Simvastatin is usually taken in the evening because the body makes most cholesterol at night. Tell your "
    "doctor if you get unexplained muscle pain or weakness. Avoid grapefruit juice while taking simvastatin.",
    ("Simvastatin is usually taken in the evening because the body makes most cholesterol at night.", [
        ("c", "Simvastatin is usually taken in the morning because the body makes most cholesterol during the "
              "day.", "time of day: evening→morning"),
        ("s", "Simvastatin is normally taken at night, when most cholesterol is produced.", "paraphrase"),
    ]),
    ("Tell your doctor if you get unexplained muscle pain or weakness.", [
        ("c", "Unexplained muscle pain while on simvastatin is expected and can be ignored.",
         "action: report→ignore"),
        ("s", "Report any muscle pain or weakness you cannot explain to your doctor.", "paraphrase"),
    ]),
    ("Avoid grapefruit juice while taking simvastatin.", [
        ("c", "Grapefruit juice is a good drink to have with simvastatin.", "action: avoid→recommended"),
        ("c", "There is no need to avoid grapefruit juice while taking simvastatin.", "negation: 'no need' added"),
        ("s", "Stay off grapefruit juice while you are on simvastatin.", "paraphrase"),
    ]),
)
_leaflet(
    "Keep taking amoxicillin until the course is finished, even if you feel better. Amoxicillin can be taken "
    "with or without food. Diarrhoea is a common side effect and is usually mild.",
    ("Keep taking amoxicillin until the course is finished, even if you feel better.", [
        ("c", "Stop taking amoxicillin as soon as you feel better.", "action: continue→stop"),
        ("s", "Finish the whole course of amoxicillin even once you feel better.", "paraphrase"),
    ]),
    ("Amoxicillin can be taken with or without food.", [
        ("c", "Amoxicillin must be taken on an empty stomach.", "food: with or without→empty stomach only"),
        ("s", "You can take amoxicillin with your meals.", "paraphrase: compatible subset (with or without→with)"),
        ("s", "It is fine to take amoxicillin on an empty stomach.",
         "paraphrase: compatible subset (with or without→without)"),
    ]),
    ("Diarrhoea is a common side effect and is usually mild.", [
        ("c", "Diarrhoea is an uncommon side effect, and when it happens it is usually severe.",
         "frequency+severity: common/mild→uncommon/severe"),
        ("s", "Mild diarrhoea often occurs as a side effect.", "paraphrase"),
    ]),
)
_leaflet(
    "Use the spray at the first sign of an angina attack. If the pain has not eased after 5 minutes, use a "
    "second dose. The spray can make you feel dizzy, so sit down before using it.",
    ("Use the spray at the first sign of an angina attack.", [
        ("c", "Wait until an angina attack has passed before using the spray.", "timing: at onset→after attack"),
        ("s", "Spray it as soon as angina starts.", "paraphrase"),
    ]),
    ("The spray can make you feel dizzy, so sit down before using it.", [
        ("c", "Stand up while using the spray, as it makes you feel more alert.", "hard: sit/dizzy→stand/alert"),
        ("s", "Because the spray may cause dizziness, be seated before you use it.", "paraphrase"),
    ]),
)
_leaflet(
    "Aspirin should not be given to children under 16 because of the risk of Reye's syndrome. Low-dose aspirin "
    "helps prevent heart attacks and strokes in people at high risk.",
    ("Aspirin should not be given to children under 16 because of the risk of Reye's syndrome.", [
        ("c", "Aspirin is the preferred painkiller for children under 16.", "safety: contraindicated→preferred"),
        ("s", "Children younger than 16 should not be given aspirin due to the risk of Reye's syndrome.",
         "paraphrase: negation kept"),
    ]),
    ("Low-dose aspirin helps prevent heart attacks and strokes in people at high risk.", [
        ("c", "Low-dose aspirin increases the chance of heart attacks and strokes in people at high risk.",
         "direction: prevent→increase"),
        ("s", "In high-risk people, low-dose aspirin lowers the likelihood of heart attack and stroke.",
         "paraphrase"),
    ]),
)
_leaflet(
    "Take prednisolone in the morning with breakfast. Taking it late in the day can make it hard to sleep. Do "
    "not stop taking it suddenly after long-term use; your doctor will reduce the dose gradually.",
    ("Take prednisolone in the morning with breakfast.", [
        ("c", "Take prednisolone at bedtime on an empty stomach.", "time of day+food: morning/with→bedtime/empty"),
        ("s", "Prednisolone is taken in the morning alongside breakfast.", "paraphrase"),
    ]),
    ("Taking it late in the day can make it hard to sleep.", [
        ("c", "Taking it late in the day helps you sleep.", "direction: hard to sleep→helps sleep"),
        ("s", "An evening dose may cause sleeping problems.", "paraphrase"),
    ]),
    ("Do not stop taking it suddenly after long-term use; your doctor will reduce the dose gradually.", [
        ("c", "After long-term use, stop it abruptly rather than tapering.", "action: taper→abrupt stop"),
        ("s", "After long-term use the dose is lowered step by step instead of stopping suddenly.", "paraphrase"),
    ]),
)
_leaflet(
    "Most moles are benign and never need treatment. A mole that changes in size, shape or colour should be "
    "checked by a doctor, because it may be a melanoma.",
    ("Most moles are benign and never need treatment.", [
        ("c", "Most moles are malignant and need to be removed.", "nature: benign→malignant"),
        ("s", "The great majority of moles are harmless and do not require treatment.", "paraphrase"),
    ]),
    ("A mole that changes in size, shape or colour should be checked by a doctor, because it may be a melanoma.", [
        ("c", "A mole that changes in size, shape or colour is reassuring and can be left alone.",
         "action: check→leave alone"),
        ("s", "Have a doctor look at any mole that grows or changes shape or colour, since it could be melanoma.",
         "paraphrase"),
    ]),
)
_leaflet(
    "Take furosemide in the morning so that you do not have to get up at night to pass urine. It makes you pass "
    "more urine, which lowers the fluid build-up in your legs and lungs.",
    ("Take furosemide in the morning so that you do not have to get up at night to pass urine.", [
        ("c", "Take furosemide at bedtime.", "time of day: morning→bedtime"),
        ("s", "Furosemide is taken early in the day to avoid night-time trips to the toilet.", "paraphrase"),
    ]),
    ("It makes you pass more urine, which lowers the fluid build-up in your legs and lungs.", [
        ("c", "It makes you pass less urine, so more fluid collects in your legs and lungs.",
         "quantity: more→less urine"),
        ("s", "By increasing urine output, it reduces fluid build-up in the legs and lungs.", "paraphrase"),
    ]),
)
_leaflet(
    "Doxycycline can make your skin more sensitive to sunlight, so use sunscreen and avoid strong sun. Swallow "
    "the capsule with a full glass of water while sitting or standing, and stay upright for 30 minutes "
    "afterwards.",
    ("Doxycycline can make your skin more sensitive to sunlight, so use sunscreen and avoid strong sun.", [
        ("c", "Doxycycline makes your skin less sensitive to sunlight, so sunscreen is unnecessary.",
         "direction: more→less sensitive"),
        ("s", "Because doxycycline increases sensitivity to sunlight, protect your skin and stay out of strong "
              "sun.", "paraphrase"),
    ]),
    ("Swallow the capsule with a full glass of water while sitting or standing, and stay upright for 30 minutes "
     "afterwards.", [
        ("c", "Lie down right after swallowing the capsule.", "position: upright→lie down"),
        ("s", "Take the capsule upright with a full glass of water and remain upright for half an hour.",
         "paraphrase"),
    ]),
)
_leaflet(
    "Iron tablets are absorbed best on an empty stomach, but you can take them with food if they upset your "
    "stomach. Iron commonly makes stools dark or black.",
    ("Iron tablets are absorbed best on an empty stomach, but you can take them with food if they upset your "
     "stomach.", [
        ("c", "Iron tablets are absorbed best with a large meal.", "food: empty stomach→large meal"),
        ("s", "If iron tablets upset your stomach, it is fine to take them with food.", "paraphrase: hedged"),
    ]),
    ("Iron commonly makes stools dark or black.", [
        ("c", "Dark or black stools on iron tablets are rare.", "frequency: commonly→rare"),
        ("s", "It is common for iron to turn stools dark or black.", "paraphrase"),
    ]),
)
_leaflet(
    "Do not stop taking apixaban without talking to your doctor, because stopping it raises your risk of a "
    "stroke. Your doctor may tell you to pause it for one or two days before an operation.",
    ("Do not stop taking apixaban without talking to your doctor, because stopping it raises your risk of a "
     "stroke.", [
        ("c", "You can stop apixaban on your own, since stopping it lowers your stroke risk.",
         "action+direction: stop blood thinner freely, raises→lowers"),
        ("s", "Stopping apixaban increases the risk of stroke, so talk to your doctor before you stop.",
         "paraphrase: same direction, raises→increases"),
    ]),
    ("Your doctor may tell you to pause it for one or two days before an operation.", [
        ("c", "Your doctor will ask you to double your apixaban dose before an operation.",
         "action: pause→double dose"),
        ("s", "Before surgery you may be told to hold apixaban for a day or two.", "paraphrase"),
    ]),
)
_leaflet(
    "Salbutamol is a reliever inhaler: use it when you are wheezy or short of breath. It works within a few "
    "minutes and its effect lasts for about 4 hours. If you need it more than three times a week, your asthma is "
    "not well controlled.",
    ("Salbutamol is a reliever inhaler: use it when you are wheezy or short of breath.", [
        ("c", "Salbutamol is a preventer to take every day whether or not you have symptoms.",
         "hard: reliever→preventer"),
        ("s", "Use salbutamol, a reliever, when you feel wheezy or breathless.", "paraphrase"),
    ]),
    ("It works within a few minutes and its effect lasts for about 4 hours.", [
        ("c", "It takes several hours to start working, and its effect lasts about a week.",
         "timing: minutes→hours, hours→week"),
        ("s", "It starts to work in minutes and lasts around 4 hours.", "paraphrase"),
    ]),
    ("If you need it more than three times a week, your asthma is not well controlled.", [
        ("c", "Needing it more than three times a week shows your asthma is well controlled.",
         "negation: 'not' removed"),
        ("s", "Using it over three times a week means your asthma is poorly controlled.", "paraphrase"),
    ]),
)
_leaflet(
    "If your blood sugar is low, eat or drink something sugary straight away, such as glucose tablets or fruit "
    "juice. Low blood sugar can cause shaking, sweating and confusion.",
    ("If your blood sugar is low, eat or drink something sugary straight away, such as glucose tablets or fruit "
     "juice.", [
        ("c", "If your blood sugar is low, avoid sugary food and drink until it recovers.",
         "action: take sugar→avoid sugar"),
        ("s", "When your blood sugar drops, have something sugary at once, like juice or glucose tablets.",
         "paraphrase"),
    ]),
    ("Low blood sugar can cause shaking, sweating and confusion.", [
        ("c", "High blood sugar, and not low blood sugar, is what causes shaking, sweating and confusion.",
         "negation: cause attributed to the opposite state"),
        ("s", "Shaking, sweating and confusion can all be signs of low blood sugar.", "paraphrase"),
    ]),
)
_leaflet(
    "Pain from a heart attack often spreads to the left arm, jaw or back. Call an ambulance straight away; do not "
    "drive yourself to hospital.",
    ("Pain from a heart attack often spreads to the left arm, jaw or back.", [
        ("c", "Heart attack pain typically spreads to the right leg.", "location: left arm→right leg"),
        ("s", "The pain of a heart attack frequently radiates to the left arm, the jaw or the back.", "paraphrase"),
    ]),
    ("Call an ambulance straight away; do not drive yourself to hospital.", [
        ("c", "Drive yourself to hospital rather than waiting for an ambulance.", "action: ambulance→drive yourself"),
        ("s", "Ring for an ambulance immediately instead of driving yourself.", "paraphrase"),
    ]),
)
_leaflet(
    "Appendicitis pain often starts around the belly button and then moves to the lower right side of the "
    "abdomen. It usually gets worse over a few hours.",
    ("Appendicitis pain often starts around the belly button and then moves to the lower right side of the "
     "abdomen.", [
        ("c", "Appendicitis pain usually starts on the upper left side of the abdomen.",
         "location: lower right→upper left"),
        ("s", "The pain of appendicitis typically begins near the navel and then shifts to the lower right "
              "abdomen.", "paraphrase"),
    ]),
    ("It usually gets worse over a few hours.", [
        ("c", "It usually eases off over a few hours.", "course: worse→eases"),
        ("s", "It generally becomes more painful over several hours.", "paraphrase"),
    ]),
)
_leaflet(
    "Antacids give quick but short-lived relief from heartburn. Take them after meals and at bedtime, when "
    "symptoms are most likely.",
    ("Antacids give quick but short-lived relief from heartburn.", [
        ("c", "Antacids act slowly but give long-lasting relief from heartburn.",
         "speed+duration: quick/short-lived→slow/long-lasting"),
        ("s", "Antacids relieve heartburn fast, but the relief does not last long.", "paraphrase"),
    ]),
    ("Take them after meals and at bedtime, when symptoms are most likely.", [
        ("c", "Take them before meals and first thing in the morning.", "timing: after meals/bedtime→before/morning"),
        ("s", "They are best taken after eating and at bedtime.", "paraphrase"),
    ]),
)
_leaflet(
    "Eating less salt lowers blood pressure. Decongestants such as pseudoephedrine can raise blood pressure, so "
    "people with high blood pressure should ask a pharmacist before using them.",
    ("Eating less salt lowers blood pressure.", [
        ("c", "Eating less salt raises blood pressure.", "direction: lowers→raises blood pressure"),
        ("c", "Cutting down on salt pushes blood pressure up.", "hard: restructured, lowers→pushes up"),
        ("s", "Cutting down on salt brings blood pressure down.", "paraphrase: same direction, lowers→brings down"),
    ]),
    ("Decongestants such as pseudoephedrine can raise blood pressure, so people with high blood pressure should "
     "ask a pharmacist before using them.", [
        ("c", "Decongestants such as pseudoephedrine lower blood pressure, so they suit people with hypertension.",
         "direction: raise→lower blood pressure"),
        ("s", "Pseudoephedrine and similar decongestants may increase blood pressure, so people with hypertension "
              "should check with a pharmacist first.", "paraphrase: same direction, raise→increase"),
    ]),
)
_leaflet(
    "Use the drops in the affected eye only. Some people notice mild stinging for a minute after using the "
    "drops; severe or lasting pain is uncommon and should be reported.",
    ("Use the drops in the affected eye only.", [
        ("c", "Put the drops in both eyes, including the unaffected one.", "laterality: affected eye→both eyes"),
        ("s", "Only the affected eye should get the drops.", "paraphrase"),
    ]),
    ("Some people notice mild stinging for a minute after using the drops; severe or lasting pain is uncommon "
     "and should be reported.", [
        ("c", "Severe, lasting pain after the drops is common and nothing to report.",
         "frequency+action: uncommon/report→common/ignore"),
        ("s", "Brief mild stinging is possible, while severe or persistent pain is unusual and should be "
              "reported.", "paraphrase: both antonyms kept"),
    ]),
)
_leaflet(
    "The flu vaccine is recommended every year for people aged 65 and over and for pregnant women. It cannot "
    "give you flu, but your arm may feel sore for a day or two.",
    ("The flu vaccine is recommended every year for people aged 65 and over and for pregnant women.", [
        ("c", "The flu vaccine is advised against for pregnant women and people aged 65 and over.",
         "pregnancy: recommended→advised against"),
        ("s", "Pregnant women and people 65 or older are advised to get the flu jab each year.", "paraphrase"),
    ]),
    ("It cannot give you flu, but your arm may feel sore for a day or two.", [
        ("c", "The vaccine can give you flu.", "negation: 'cannot' removed"),
        ("s", "A sore arm for a day or two is possible, but the vaccine can't cause flu.", "paraphrase"),
    ]),
)
_leaflet(
    "Side effects such as nausea are more likely in the first few weeks and usually fade. It may take 4 to 6 "
    "weeks before you feel the full benefit of sertraline.",
    ("Side effects such as nausea are more likely in the first few weeks and usually fade.", [
        ("c", "Side effects such as nausea tend to appear only after several months and then get steadily worse.",
         "timing+course: early/fade→late/worse"),
        ("s", "Nausea and similar side effects are most common in the first weeks and generally wear off.",
         "paraphrase"),
    ]),
    ("It may take 4 to 6 weeks before you feel the full benefit of sertraline.", [
        ("c", "You should feel the full benefit of sertraline within the first day.", "timing: weeks→first day"),
        ("s", "The full benefit of sertraline may only be felt after four to six weeks.", "paraphrase"),
    ]),
)
_leaflet(
    "Nicotine patches are applied once a day to clean, dry, hairless skin on the upper arm or chest. Put each new "
    "patch on a different area of skin. Remove the 16-hour patch before going to bed.",
    ("Put each new patch on a different area of skin.", [
        ("c", "Put each new patch on exactly the same spot as the last one.", "location: different→same spot"),
        ("s", "Move each new patch to another area of skin.", "paraphrase"),
    ]),
    ("Remove the 16-hour patch before going to bed.", [
        ("c", "Put the 16-hour patch on just before going to bed.", "action: remove→put on at bedtime"),
        ("s", "Take the 16-hour patch off before bedtime.", "paraphrase"),
    ]),
)
_leaflet(
    "Loperamide slows down the movement of the gut, so stools become firmer and less frequent. It should be "
    "avoided if you have a high fever or blood in your stools.",
    ("Loperamide slows down the movement of the gut, so stools become firmer and less frequent.", [
        ("c", "Loperamide speeds up the gut, so stools become looser and more frequent.",
         "direction: slows/firmer/less→speeds/looser/more"),
        ("s", "By slowing the gut, loperamide makes stools firmer and less frequent.", "paraphrase"),
    ]),
    ("It should be avoided if you have a high fever or blood in your stools.", [
        ("c", "It is especially useful when you have a high fever or blood in your stools.",
         "action: avoided→especially useful"),
        ("s", "Do not use it if you have a high temperature or bloody stools.", "paraphrase"),
    ]),
)
_leaflet(
    "Paracetamol is safe to use at the usual doses during pregnancy and breastfeeding. Taking more than the "
    "recommended dose can cause serious liver damage.",
    ("Paracetamol is safe to use at the usual doses during pregnancy and breastfeeding.", [
        ("c", "Paracetamol is contraindicated during pregnancy and breastfeeding.",
         "pregnancy: safe→contraindicated"),
        ("s", "At normal doses paracetamol can be used while pregnant or breastfeeding.", "paraphrase"),
    ]),
    ("Taking more than the recommended dose can cause serious liver damage.", [
        ("c", "Going over the recommended dose is harmless to the liver.", "hard: serious damage→harmless"),
        ("s", "An overdose beyond the recommended amount may seriously damage the liver.", "paraphrase"),
    ]),
)
_leaflet(
    "Ice packs help in the first 48 hours after a sprain by reducing swelling. After that, gentle movement helps "
    "the joint recover faster than complete rest.",
    ("Ice packs help in the first 48 hours after a sprain by reducing swelling.", [
        ("c", "Ice packs increase swelling in the first 48 hours after a sprain.", "direction: reducing→increase"),
        ("s", "In the first two days after a sprain, ice packs help bring the swelling down.", "paraphrase"),
    ]),
    ("After that, gentle movement helps the joint recover faster than complete rest.", [
        ("c", "After that, complete rest lets the joint recover faster than gentle movement.",
         "hard: comparison reversed (movement↔rest)"),
        ("s", "Beyond that point the joint heals more quickly with gentle movement than with full rest.",
         "paraphrase"),
    ]),
)
_leaflet(
    "Children with a mild fever can usually be cared for at home. Give plenty of fluids and dress the child in "
    "light clothing.",
    ("Children with a mild fever can usually be cared for at home.", [
        ("c", "Children with a mild fever usually need to be admitted to hospital.", "severity/care: home→hospital"),
        ("s", "A child with a slight fever can generally be looked after at home.", "paraphrase"),
    ]),
    ("Give plenty of fluids and dress the child in light clothing.", [
        ("c", "Limit the child's fluids and wrap them in warm, heavy blankets.",
         "quantity: plenty→limit, light→heavy clothing"),
        ("s", "Offer lots to drink and keep the child in light clothes.", "paraphrase"),
    ]),
)


def _split(record_id: str) -> str:
    stem = record_id.rsplit("-", 1)[0]
    return "dev" if hashlib.sha256(stem.encode()).digest()[0] % 2 == 0 else "test"


def build() -> list[dict]:
    answers = [json.loads(line)["Free_form_answer"].replace("\n", " ")
               for line in KQA.read_text(encoding="utf-8").splitlines()]
    groups = []
    for line, sentence, claims in KQA_ITEMS:
        groups.append((f"kqa{line:03d}", answers[line - 1], sentence,
                       f"data/demo/kqa/questions_w_answers.jsonl line {line} Free_form_answer", claims))
    for paragraph, sentence, claims in LEAFLETS:
        groups.append(("leaflet", paragraph, sentence, "written: patient leaflet", claims))
    rows, seen = [], Counter()
    for prefix, evidence, sentence, source, claims in groups:
        assert sentence in evidence, (source, sentence)
        seen[prefix] += 1
        stem = f"nw-{prefix}-{seen[prefix]:02d}"
        letters = Counter()
        for label, claim, transform in claims:
            assert claim != sentence, claim
            letters[label] += 1
            record_id = f"{stem}-{label}{letters[label]}"
            rows.append({
                "id": record_id, "kind": KIND,
                "label": {"c": "contradicted", "s": "supported"}[label],
                "claim": claim, "evidence": evidence, "evidence_sentence": sentence,
                "source": source, "transform": transform, "split": _split(record_id),
            })
    return rows


def main() -> None:
    rows = build()
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"{len(rows)} pairs → {OUT.relative_to(ROOT)}")
    print(Counter((r["label"], r["source"].startswith("written")) for r in rows))
    print(Counter((r["label"], r["split"]) for r in rows))
    print(Counter((r["label"], r["transform"].split(":")[0]) for r in rows))


if __name__ == "__main__":
    main()
