"""Build the second held-out set of natural claim/evidence pairs (``split = "heldout2"``).

Every paragraph and claim below was written by hand, in one pass, by an AI helper (2026-12-06) from general
knowledge of UK patient information leaflets and NHS condition pages, without opening the contradiction detector,
its word lists, or the older evaluation sets. The paragraphs paraphrase the kind of advice given on public NHS
pages (https://www.nhs.uk/medicines/ and https://www.nhs.uk/conditions/); they are not copies of them.

Each evidence paragraph is a list of sentences; the paragraph is the sentences joined by one space. For each
evidence sentence there is at least one contradicted claim (one fact or instruction reversed, the way a wrong
answer would phrase it) and at least one supported claim (a faithful paraphrase). See
``tests/scoring/data/natural_contradictions_heldout2.md`` for the provenance and the transform families.

Deterministic: no randomness, no network. Run ``python bench/data/build_natural_contradictions_heldout2.py`` to
rewrite ``tests/scoring/data/natural_contradictions_heldout2.jsonl`` (sorted by id).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "tests" / "scoring" / "data" / "natural_contradictions_heldout2.jsonl"

SOURCES = {"leaflet": "written: patient leaflet", "page": "written: condition page"}

# (group, topic, [(sentence, [(label, transform, claim), ...]), ...])
# label "c" = contradicted, "s" = supported; transform is "family: detail".
LEAFLETS = [
    ("leaflet", "citalopram", [
        ("Take citalopram once a day, in the morning or the evening, with or without food.", [
            ("c", "frequency: once a day -> twice a day", "Citalopram should be taken twice a day."),
            ("s", "paraphrase: compatible subset", "You can take your daily citalopram with a meal."),
            ("s", "paraphrase: compatible subset", "Taking citalopram in the evening is fine."),
        ]),
        ("It usually takes 1 to 2 weeks before you start to feel better, and up to 6 weeks for the full effect.", [
            ("c", "duration: weeks -> a day or two", "Citalopram normally starts working within a day or two."),
            ("s", "paraphrase: synonym", "The full benefit of citalopram can take as long as six weeks to appear."),
        ]),
        ("Do not stop taking citalopram suddenly, even if you feel better, because you may get withdrawal symptoms.", [
            ("c", "action: keep taking -> stop", "Once you feel better you can come off citalopram straight away."),
            ("s", "paraphrase: negation kept",
             "Coming off citalopram abruptly is inadvisable, as it can cause withdrawal effects."),
        ]),
    ]),
    ("leaflet", "fluoxetine", [
        ("Fluoxetine capsules are usually taken once a day in the morning, because taking them later can make it "
         "harder to sleep.", [
            ("c", "time_of_day: morning -> bedtime", "Fluoxetine is best taken at bedtime because it helps you sleep."),
            ("s", "paraphrase: restructure", "Taking fluoxetine early in the day helps avoid trouble sleeping."),
        ]),
        ("Fluoxetine stays in the body for a long time, so withdrawal symptoms are less likely than with other "
         "antidepressants.", [
            ("c", "direction: less likely -> more likely",
             "Withdrawal symptoms are more of a problem with fluoxetine than with other antidepressants."),
            ("c", "duration: long -> short", "Fluoxetine leaves the body very quickly."),
            ("s", "paraphrase: synonym",
             "Because fluoxetine lingers in the body, withdrawal effects are less common than with other "
             "antidepressants."),
        ]),
        ("Tell your doctor straight away if you have thoughts of harming yourself, especially in the first few weeks "
         "of treatment.", [
            ("c", "timing: first weeks -> after months",
             "Thoughts of self-harm are mainly a concern after several months of fluoxetine treatment."),
            ("s", "paraphrase: synonym",
             "Contact your doctor urgently if you think about hurting yourself early in treatment."),
        ]),
    ]),
    ("leaflet", "venlafaxine", [
        ("Venlafaxine can raise your blood pressure, so your doctor may check it before and during treatment.", [
            ("c", "direction: raise -> lower", "Venlafaxine tends to bring blood pressure down."),
            ("s", "paraphrase: restructure",
             "Your blood pressure may be monitored while you take venlafaxine because the medicine can increase it."),
            ("s", "paraphrase: hedged",
             "Venlafaxine may push your blood pressure up, so it might be checked before you start."),
        ]),
        ("Take venlafaxine with food, at about the same time each day.", [
            ("c", "food: with food -> empty stomach", "Venlafaxine should be taken on an empty stomach."),
            ("s", "paraphrase: synonym", "Venlafaxine is taken with a meal at roughly the same time every day."),
        ]),
        ("Common side effects include feeling sick, headaches, sweating and dry mouth, and these usually get better "
         "after the first couple of weeks.", [
            ("c", "duration: get better -> get worse",
             "Side effects like sweating and headaches usually get worse the longer you take venlafaxine."),
            ("c", "prevalence: common -> rare", "Feeling sick is a rare side effect of venlafaxine."),
            ("s", "paraphrase: synonym",
             "Nausea and a dry mouth are frequent with venlafaxine but typically ease within a few weeks."),
        ]),
    ]),
    ("leaflet", "quetiapine", [
        ("Quetiapine often makes people feel sleepy, especially when they first start taking it.", [
            ("c", "timing: at the start -> after months",
             "Sleepiness from quetiapine usually only shows up after months of treatment."),
            ("s", "paraphrase: synonym", "Drowsiness is common with quetiapine, particularly at the beginning."),
        ]),
        ("Standard tablets are usually taken twice a day, but modified-release tablets are taken once a day.", [
            ("c", "role_swap: standard <-> modified-release",
             "Modified-release quetiapine is taken twice a day, while the standard tablets are taken once a day."),
            ("s", "paraphrase: both antonyms kept",
             "Quetiapine modified-release tablets are once daily, whereas the standard tablets are normally twice "
             "daily."),
        ]),
        ("Quetiapine can cause weight gain, so your doctor may check your weight, blood sugar and cholesterol "
         "regularly.", [
            ("c", "direction: weight gain -> weight loss", "Quetiapine commonly makes people lose weight."),
            ("s", "paraphrase: restructure",
             "Because quetiapine may make you put on weight, your weight, blood glucose and cholesterol may be "
             "checked regularly."),
        ]),
    ]),
    ("leaflet", "levetiracetam", [
        ("Levetiracetam is usually taken twice a day, with or without food.", [
            ("c", "frequency: twice -> three times", "Levetiracetam is normally taken three times a day."),
            ("s", "paraphrase: compatible subset", "You can take levetiracetam on an empty stomach."),
        ]),
        ("Do not stop taking levetiracetam suddenly, as this can bring on seizures.", [
            ("c", "safety: dangerous -> safe", "Stopping levetiracetam abruptly is a safe way to come off it."),
            ("c", "causality: bring on -> prevent", "Stopping levetiracetam all at once helps prevent seizures."),
            ("s", "paraphrase: restructure", "Suddenly stopping levetiracetam may trigger fits."),
        ]),
        ("Some people notice mood changes such as feeling irritable, anxious or low, and you should tell your doctor "
         "if this happens.", [
            ("c", "negation: added",
             "Mood changes on levetiracetam are expected and don't need to be mentioned to your doctor."),
            ("s", "paraphrase: synonym",
             "Let your doctor know if levetiracetam leaves you irritable, anxious or down."),
        ]),
    ]),
    ("leaflet", "lamotrigine", [
        ("Your dose of lamotrigine will be increased slowly over several weeks to lower the risk of a serious skin "
         "rash.", [
            ("c", "duration: slowly -> at once", "Lamotrigine is started at the full dose straight away."),
            ("c", "direction: lower the risk -> raise the risk",
             "Building up the lamotrigine dose slowly makes a serious rash more likely."),
            ("s", "paraphrase: synonym", "Lamotrigine is built up gradually to reduce the chance of a serious rash."),
        ]),
        ("If you get a skin rash, especially in the first 8 weeks, contact a doctor straight away.", [
            ("c", "severity: urgent -> routine",
             "A rash in the first 8 weeks of lamotrigine can wait until your next routine appointment."),
            ("c", "negation: added",
             "There is no need to contact a doctor about a rash in the first 8 weeks of lamotrigine."),
            ("s", "paraphrase: other unit",
             "See a doctor urgently if a rash appears during the first two months on lamotrigine."),
        ]),
        ("Lamotrigine is generally considered one of the safer epilepsy medicines to take during pregnancy.", [
            ("c", "safety: safer -> most dangerous",
             "Lamotrigine is considered one of the riskiest epilepsy medicines in pregnancy."),
            ("s", "paraphrase: hedged",
             "Lamotrigine is thought to be among the lower-risk epilepsy medicines for pregnant women."),
        ]),
    ]),
    ("leaflet", "carbimazole", [
        ("Carbimazole reduces the amount of thyroid hormone your body makes and is used to treat an overactive "
         "thyroid.", [
            ("c", "condition: overactive -> underactive", "Carbimazole is used to treat an underactive thyroid."),
            ("c", "direction: reduces -> increases", "Carbimazole boosts the thyroid's production of hormone."),
            ("s", "paraphrase: synonym",
             "Carbimazole lowers thyroid hormone production in people with hyperthyroidism."),
        ]),
        ("Tell your doctor straight away if you get a sore throat, mouth ulcers or a high temperature, as these can "
         "be signs of a blood problem.", [
            ("c", "severity: warning sign -> harmless",
             "A sore throat while taking carbimazole is a harmless side effect that can be ignored."),
            ("s", "paraphrase: synonym",
             "On carbimazole, a fever or sore throat should be reported to a doctor immediately."),
        ]),
        ("Treatment usually lasts 12 to 18 months.", [
            ("c", "duration: months -> weeks", "Carbimazole is usually taken for just a couple of weeks."),
            ("s", "paraphrase: other unit", "A course of carbimazole typically runs for one to one and a half years."),
        ]),
    ]),
    ("leaflet", "spironolactone", [
        ("Spironolactone is a type of water tablet that helps your body get rid of extra fluid while keeping "
         "potassium.", [
            ("c", "direction: keeps potassium -> loses potassium", "Spironolactone makes your body lose potassium."),
            ("s", "paraphrase: synonym", "Spironolactone is a diuretic that spares potassium."),
        ]),
        ("Avoid potassium supplements and salt substitutes that contain potassium, because your potassium level may "
         "get too high.", [
            ("c", "action: avoid -> take", "Taking potassium supplements alongside spironolactone is recommended."),
            ("c", "direction: too high -> too low",
             "Salt substitutes are a problem with spironolactone because they make potassium fall too low."),
            ("s", "paraphrase: synonym",
             "Potassium-containing salt substitutes should be avoided while on spironolactone."),
        ]),
        ("Take it in the morning so you do not need to get up in the night to pee.", [
            ("c", "time_of_day: morning -> bedtime", "Spironolactone is best taken at bedtime."),
            ("s", "paraphrase: negation kept",
             "Taking spironolactone early in the day avoids night-time trips to the toilet."),
        ]),
    ]),
    ("leaflet", "digoxin", [
        ("Digoxin slows your heart rate and is used to treat some types of irregular heartbeat, such as atrial "
         "fibrillation.", [
            ("c", "direction: slows -> speeds up", "Digoxin speeds up your heart rate."),
            ("s", "paraphrase: restructure",
             "Digoxin is given for atrial fibrillation and brings the heart rate down."),
        ]),
        ("Signs of too much digoxin include feeling sick, being sick, loss of appetite and blurred or yellow-tinted "
         "vision.", [
            ("c", "direction: loss of appetite -> increased appetite",
             "A bigger appetite than usual is a sign of too much digoxin."),
            ("s", "paraphrase: synonym",
             "Nausea, vomiting and vision with a yellow tinge can mean the digoxin level is too high."),
        ]),
        ("Your doctor may arrange blood tests to check the level of digoxin and your kidney function.", [
            ("c", "body_site: kidney -> liver",
             "While you take digoxin, blood tests check your liver function rather than your kidneys."),
            ("s", "paraphrase: synonym",
             "Blood tests may be used to monitor digoxin levels and how well your kidneys work."),
        ]),
    ]),
    ("leaflet", "rivaroxaban", [
        ("Rivaroxaban 15 mg and 20 mg tablets should be taken with food, because your body absorbs them better that "
         "way.", [
            ("c", "food: with food -> empty stomach",
             "Rivaroxaban 20 mg tablets work best when taken on an empty stomach."),
            ("s", "paraphrase: restructure",
             "The 15 mg and 20 mg strengths of rivaroxaban are taken with a meal to improve absorption."),
        ]),
        ("Rivaroxaban thins the blood, so you may bleed more easily and for longer than usual.", [
            ("c", "direction: thins -> clots faster", "Rivaroxaban makes your blood clot more quickly."),
            ("c", "negation: added", "Rivaroxaban does not change how easily you bleed."),
            ("s", "paraphrase: restructure", "Because rivaroxaban is a blood thinner, cuts may bleed for longer."),
            ("s", "paraphrase: hedged", "You might find you bleed more easily while on rivaroxaban."),
        ]),
        ("Do not take aspirin or ibuprofen with rivaroxaban unless a doctor advises it, as they increase the risk of "
         "bleeding.", [
            ("c", "direction: increase -> lower", "Ibuprofen lowers the bleeding risk when taken with rivaroxaban."),
            ("c", "action: avoid -> take", "Aspirin is a good painkiller to take alongside rivaroxaban."),
            ("s", "paraphrase: restructure",
             "Combining rivaroxaban with aspirin or ibuprofen raises the chance of bleeding, so avoid them unless a "
             "doctor says otherwise."),
        ]),
    ]),
    ("leaflet", "edoxaban", [
        ("Edoxaban is taken once a day, with or without food.", [
            ("c", "frequency: once -> twice", "Edoxaban is taken twice daily."),
            ("s", "paraphrase: compatible subset", "Edoxaban can be taken with breakfast."),
        ]),
        ("If you forget a dose, take it as soon as you remember on the same day, but never take two doses on the same "
         "day to make up for it.", [
            ("c", "negation: dropped", "If you forget edoxaban, take two doses the same day to catch up."),
            ("c", "timing: as soon as you remember -> wait until the next day",
             "If you miss a dose of edoxaban, wait until the following day before taking it."),
            ("s", "paraphrase: negation kept",
             "Doubling up edoxaban doses on one day to make up for a missed one should be avoided."),
        ]),
        ("Tell any dentist or surgeon that you take edoxaban, as you may need to stop it before some procedures.", [
            ("c", "negation: added", "Edoxaban never needs to be paused before surgery or dental treatment."),
            ("s", "paraphrase: hedged", "Edoxaban might have to be stopped ahead of some operations or dental work."),
        ]),
    ]),
    ("leaflet", "tramadol", [
        ("Tramadol is a strong painkiller used for moderate to severe pain, usually when other painkillers have not "
         "worked.", [
            ("c", "line_of_therapy: after others -> first choice",
             "Tramadol is the first painkiller to try for mild pain."),
            ("s", "paraphrase: synonym",
             "Tramadol is generally used for moderate or severe pain after other painkillers have failed."),
            ("s", "paraphrase: negation kept", "Tramadol is not usually the first painkiller people are given."),
        ]),
        ("It can be addictive if you take it for a long time, so your doctor will review your treatment regularly.", [
            ("c", "negation: added", "Taking tramadol long term carries no risk of addiction."),
            ("s", "paraphrase: restructure", "Using tramadol over a long period can lead to addiction."),
        ]),
        ("Do not drink alcohol while taking tramadol, because it can make you very drowsy and slow your "
         "breathing.", [
            ("c", "safety: avoid -> fine in moderation", "Drinking alcohol with tramadol is fine in moderation."),
            ("c", "direction: slow -> speed up", "Tramadol combined with alcohol speeds up your breathing."),
            ("s", "paraphrase: synonym",
             "Mixing alcohol and tramadol can cause severe sleepiness and slowed breathing."),
        ]),
    ]),
    ("leaflet", "morphine oral solution", [
        ("Morphine oral solution works quickly and is often used for breakthrough pain, while slow-release tablets "
         "control pain over 12 hours.", [
            ("c", "role_swap: oral solution <-> slow-release tablets",
             "Slow-release morphine tablets are used for breakthrough pain, while the oral solution controls pain "
             "over 12 hours."),
            ("s", "paraphrase: both antonyms kept",
             "Morphine oral solution acts fast for breakthrough pain, whereas slow-release tablets give 12-hour "
             "relief."),
            ("s", "paraphrase: other unit", "Slow-release morphine tablets control pain for half a day."),
        ]),
        ("Use the oral syringe or spoon that comes with the medicine to measure your dose accurately.", [
            ("c", "action: supplied measure -> kitchen spoon",
             "A kitchen teaspoon is the best way to measure morphine oral solution."),
            ("s", "paraphrase: synonym", "Measure morphine solution with the syringe or spoon supplied with it."),
        ]),
        ("Constipation is very common with morphine, so your doctor may also prescribe a laxative.", [
            ("c", "prevalence: very common -> rare", "Constipation is a rare side effect of morphine."),
            ("c", "direction: constipation -> diarrhoea", "Morphine often gives people diarrhoea."),
            ("s", "paraphrase: synonym",
             "Many people on morphine get constipated, and a laxative may be prescribed as well."),
        ]),
    ]),
    ("leaflet", "oxybutynin", [
        ("Oxybutynin relaxes the muscles of the bladder and is used to treat an overactive bladder.", [
            ("c", "direction: relaxes -> tightens", "Oxybutynin tightens the bladder muscles."),
            ("s", "paraphrase: synonym", "Oxybutynin is a bladder muscle relaxant used for overactive bladder."),
        ]),
        ("A dry mouth is a very common side effect; sucking sugar-free sweets or sipping water can help.", [
            ("c", "prevalence: very common -> uncommon", "Dry mouth is an uncommon side effect of oxybutynin."),
            ("s", "paraphrase: synonym", "Dry mouth happens often with oxybutynin, and sugar-free sweets may ease it."),
            ("s", "paraphrase: compatible subset",
             "Sipping water can help with the dry mouth that oxybutynin often causes."),
        ]),
        ("Older people may be more likely to get confusion with oxybutynin.", [
            ("c", "population: older -> younger", "Confusion from oxybutynin is more likely in younger people."),
            ("s", "paraphrase: hedged", "Confusion on oxybutynin may be more of a risk in elderly patients."),
        ]),
    ]),
    ("leaflet", "finasteride", [
        ("Finasteride shrinks an enlarged prostate, but it can take 6 months or more before you notice an "
         "improvement.", [
            ("c", "duration: months -> days", "Finasteride improves prostate symptoms within a few days."),
            ("c", "direction: shrinks -> enlarges", "Finasteride makes the prostate grow larger."),
            ("s", "paraphrase: synonym",
             "Finasteride reduces the size of the prostate, though the benefit may take at least six months to show."),
            ("s", "paraphrase: other unit",
             "You may need to take finasteride for half a year or longer before symptoms improve."),
        ]),
        ("Women who are pregnant or might become pregnant should not handle crushed or broken finasteride "
         "tablets.", [
            ("c", "safety: avoid -> safe", "Pregnant women can safely handle broken finasteride tablets."),
            ("s", "paraphrase: restructure",
             "Crushed or broken finasteride tablets should be kept away from women who are or may become pregnant."),
        ]),
        ("Finasteride can lower the result of a PSA blood test, so tell your doctor you are taking it.", [
            ("c", "direction: lower -> raise", "Finasteride pushes PSA test results up."),
            ("s", "paraphrase: hedged", "Taking finasteride may reduce your PSA reading."),
        ]),
    ]),
    ("leaflet", "sumatriptan", [
        ("Take sumatriptan as soon as the headache starts, not during the aura before it.", [
            ("c", "timing: headache -> aura",
             "Sumatriptan works best taken during the aura, before the headache begins."),
            ("s", "paraphrase: negation kept",
             "Wait until the headache phase of the migraine starts, rather than the aura, before taking sumatriptan."),
        ]),
        ("If the first dose helps but the migraine comes back, you can take a second dose after at least 2 hours.", [
            ("c", "number: 2 hours -> 30 minutes", "A second dose of sumatriptan can be taken after 30 minutes."),
            ("s", "paraphrase: other unit", "A repeat sumatriptan dose needs a gap of at least 120 minutes."),
        ]),
        ("If the first dose does not help at all, do not take a second dose for the same attack.", [
            ("c", "negation: dropped",
             "If the first sumatriptan dose has no effect, take another one straight away for the same attack."),
            ("s", "paraphrase: negation kept",
             "When the first dose gives no relief, skip a second dose for that migraine."),
        ]),
    ]),
    ("leaflet", "montelukast", [
        ("Montelukast is taken once a day in the evening to prevent asthma symptoms.", [
            ("c", "time_of_day: evening -> morning", "Montelukast should be taken first thing in the morning."),
            ("s", "paraphrase: synonym", "Montelukast is a daily evening tablet used to prevent asthma."),
        ]),
        ("It does not work quickly enough to treat an asthma attack, so keep using your reliever inhaler for "
         "that.", [
            ("c", "role_swap: preventer -> reliever",
             "Montelukast can be used instead of a reliever inhaler during an asthma attack."),
            ("c", "negation: dropped", "Montelukast works quickly enough to treat an asthma attack."),
            ("s", "paraphrase: negation kept", "Montelukast is too slow-acting to relieve an asthma attack."),
        ]),
        ("Tell your doctor if you notice changes in mood or behaviour, such as bad dreams, trouble sleeping or "
         "feeling agitated.", [
            ("c", "severity: report -> harmless", "Nightmares on montelukast are harmless and best ignored."),
            ("s", "paraphrase: synonym", "Report agitation or nightmares while on montelukast to your doctor."),
        ]),
    ]),
    ("leaflet", "fexofenadine", [
        ("Fexofenadine is a non-drowsy antihistamine, so it is unlikely to make you sleepy.", [
            ("c", "direction: non-drowsy -> sedating",
             "Fexofenadine is a sedating antihistamine that often makes you drowsy."),
            ("s", "paraphrase: negation kept", "Fexofenadine rarely causes sleepiness."),
        ]),
        ("Do not take it with fruit juice such as grapefruit, orange or apple juice, because juice can reduce how "
         "much medicine your body absorbs.", [
            ("c", "direction: reduce -> help", "Fruit juice helps your body absorb fexofenadine."),
            ("c", "food: avoid juice -> take with juice",
             "Fexofenadine is best washed down with a glass of orange juice."),
            ("s", "paraphrase: restructure", "Orange or apple juice can lower the amount of fexofenadine absorbed."),
        ]),
        ("Indigestion remedies containing aluminium or magnesium should be taken at least 2 hours apart from "
         "fexofenadine.", [
            ("c", "timing: apart -> together",
             "Antacids containing magnesium can be taken at the same time as fexofenadine."),
            ("s", "paraphrase: synonym",
             "Leave a gap of two hours or more between fexofenadine and aluminium- or magnesium-based antacids."),
        ]),
    ]),
    ("leaflet", "loperamide", [
        ("Loperamide slows down the movement of your gut, making your poo firmer and less frequent.", [
            ("c", "direction: slows -> speeds up", "Loperamide speeds up the movement of your gut."),
            ("s", "paraphrase: restructure",
             "Loperamide makes stools more solid and less frequent by slowing the bowel."),
        ]),
        ("Do not give loperamide to children under 12 unless a doctor prescribes it.", [
            ("c", "population: over 12 -> any age",
             "Loperamide is suitable for children of any age without a prescription."),
            ("s", "paraphrase: restructure",
             "Children younger than 12 should only have loperamide on a doctor's prescription."),
            ("s", "paraphrase: negation kept", "Without a prescription, loperamide isn't for under-12s."),
        ]),
        ("Stop taking it and see a doctor if you have blood in your poo or a high temperature.", [
            ("c", "action: stop -> increase", "If there is blood in your stool, increase the dose of loperamide."),
            ("s", "paraphrase: synonym",
             "A fever or bloody stools are reasons to stop loperamide and get medical advice."),
        ]),
    ]),
    ("leaflet", "Gaviscon", [
        ("Gaviscon forms a protective layer on top of your stomach contents that stops acid coming back up.", [
            ("c", "causality: blocks reflux -> makes acid", "Gaviscon works by making your stomach produce more acid."),
            ("c", "negation: added", "Gaviscon does not stop acid from coming back up."),
            ("s", "paraphrase: synonym",
             "Gaviscon creates a barrier that floats on the stomach contents and keeps acid from rising."),
        ]),
        ("Take it after meals and at bedtime, when heartburn is most likely.", [
            ("c", "timing: after -> before", "Gaviscon is best taken before meals."),
            ("s", "paraphrase: synonym", "Gaviscon is typically taken following meals and before going to bed."),
        ]),
        ("Leave 2 hours between Gaviscon and other medicines, as it can stop them from being absorbed properly.", [
            ("c", "direction: hinders -> improves", "Gaviscon improves the absorption of other medicines."),
            ("s", "paraphrase: restructure",
             "Separate Gaviscon from other medicines by two hours because it may interfere with their absorption."),
        ]),
    ]),
    ("leaflet", "trimethoprim", [
        ("Trimethoprim is an antibiotic mainly used to treat urinary tract infections.", [
            ("c", "condition: urinary -> chest", "Trimethoprim is mainly used to treat chest infections."),
            ("s", "paraphrase: synonym", "Trimethoprim's main use is for urine infections."),
        ]),
        ("For an uncomplicated urine infection in women, the course is usually 3 days.", [
            ("c", "number: 3 days -> 14 days",
             "Women with a simple urine infection usually take trimethoprim for 14 days."),
            ("s", "paraphrase: synonym", "A three-day course is typical for an uncomplicated UTI in women."),
        ]),
        ("It is not usually recommended in the first 3 months of pregnancy because it can affect how the body uses "
         "folic acid.", [
            ("c", "safety: avoided -> preferred", "Trimethoprim is the preferred antibiotic in early pregnancy."),
            ("s", "paraphrase: other unit", "Trimethoprim is generally avoided during the first trimester."),
        ]),
    ]),
    ("leaflet", "flucloxacillin", [
        ("Take flucloxacillin on an empty stomach, either 1 hour before food or 2 hours after.", [
            ("c", "food: empty stomach -> with food", "Flucloxacillin should be taken with a meal."),
            ("c", "number: 2 hours after -> 10 minutes after",
             "Flucloxacillin is best taken about 10 minutes after eating."),
            ("s", "paraphrase: restructure",
             "Flucloxacillin should be taken an hour before a meal or two hours after it."),
            ("s", "paraphrase: negation kept", "Flucloxacillin shouldn't be taken with food."),
        ]),
        ("It is usually taken 4 times a day, spaced evenly through the day.", [
            ("c", "frequency: 4 times -> once", "Flucloxacillin is taken once a day."),
            ("s", "paraphrase: synonym", "Flucloxacillin is normally taken four times daily at evenly spaced times."),
        ]),
        ("Do not take flucloxacillin if you have ever had an allergic reaction to penicillin.", [
            ("c", "safety: contraindicated -> safe",
             "People who are allergic to penicillin can safely take flucloxacillin."),
            ("s", "paraphrase: restructure", "Anyone with a previous penicillin allergy should avoid flucloxacillin."),
        ]),
    ]),
    ("leaflet", "clarithromycin", [
        ("Clarithromycin is an antibiotic often used for chest infections and in people who are allergic to "
         "penicillin.", [
            ("c", "population: suitable -> unsuitable",
             "Clarithromycin is unsuitable for people who are allergic to penicillin."),
            ("s", "paraphrase: synonym", "Clarithromycin is a common choice for people with a penicillin allergy."),
        ]),
        ("It interacts with many other medicines, including some statins, so your doctor may tell you to stop your "
         "statin during the course.", [
            ("c", "prevalence: many interactions -> few",
             "Clarithromycin has very few interactions with other medicines."),
            ("s", "paraphrase: hedged", "You may be asked to pause some statins while taking clarithromycin."),
        ]),
        ("A common side effect is a strange or metallic taste in the mouth.", [
            ("c", "prevalence: common -> rare", "A metallic taste is a rare side effect of clarithromycin."),
            ("s", "paraphrase: synonym", "Many people on clarithromycin notice an odd, metallic taste."),
        ]),
    ]),
    ("leaflet", "fluconazole", [
        ("For vaginal thrush, fluconazole is usually taken as a single 150 mg capsule.", [
            ("c", "dose: single dose -> daily for a week",
             "Vaginal thrush is usually treated with a week of daily 150 mg fluconazole capsules."),
            ("c", "dose: 150 mg -> 1.5 g", "The usual fluconazole dose for vaginal thrush is one 1.5 g capsule."),
            ("s", "paraphrase: other unit",
             "One 0.15 g capsule of fluconazole is the usual treatment for vaginal thrush."),
        ]),
        ("Symptoms usually improve within 3 days, but see a doctor if they have not cleared up after 7 days.", [
            ("c", "duration: 3 days -> a month",
             "Thrush symptoms usually take about a month to improve on fluconazole."),
            ("s", "paraphrase: other unit",
             "Most people feel better within three days; get advice if symptoms remain after a week."),
        ]),
        ("Do not use fluconazole if you are pregnant; see a doctor, who can recommend a cream or pessary "
         "instead.", [
            ("c", "population: avoid in pregnancy -> recommended",
             "Fluconazole capsules are the recommended thrush treatment for pregnant women."),
            ("c", "negation: dropped", "Fluconazole can be used if you are pregnant."),
            ("s", "paraphrase: restructure",
             "Pregnant women with thrush should use a cream or pessary suggested by a doctor rather than fluconazole."),
        ]),
    ]),
    ("leaflet", "aciclovir", [
        ("Aciclovir works best if you start taking it as soon as symptoms appear.", [
            ("c", "timing: early -> late", "Aciclovir works best if started a week after symptoms appear."),
            ("s", "paraphrase: synonym", "Starting aciclovir early, at the first signs, gives the greatest benefit."),
        ]),
        ("Aciclovir tablets for shingles are usually taken 5 times a day, about 4 hours apart, for 7 days.", [
            ("c", "frequency: 5 times -> twice", "For shingles, aciclovir tablets are taken twice a day."),
            ("c", "duration: 7 days -> 3 months", "A course of aciclovir for shingles lasts 3 months."),
            ("s", "paraphrase: other unit", "For shingles, aciclovir is taken five times daily for a week."),
        ]),
        ("Drink plenty of fluids while you are taking aciclovir to help protect your kidneys.", [
            ("c", "action: drink more -> drink less", "Cut down on fluids while taking aciclovir."),
            ("s", "paraphrase: synonym", "Keeping well hydrated on aciclovir helps protect the kidneys."),
        ]),
    ]),
    ("leaflet", "children's paracetamol", [
        ("Children's paracetamol liquid can be given to babies from 2 months old for pain or a high temperature.", [
            ("c", "population: 2 months -> 2 years",
             "Paracetamol liquid is only suitable for children aged 2 years and over."),
            ("s", "paraphrase: other unit",
             "Babies aged eight weeks and older can have paracetamol liquid for a fever."),
        ]),
        ("Leave at least 4 hours between doses and do not give more than 4 doses in 24 hours.", [
            ("c", "number: 4 doses -> 8 doses", "A child can have up to 8 doses of paracetamol in 24 hours."),
            ("c", "number: 4 hours -> 1 hour", "Doses of children's paracetamol can be given an hour apart."),
            ("s", "paraphrase: negation kept",
             "No more than four doses should be given in a day, at least four hours apart."),
        ]),
        ("Check that other medicines you give your child do not also contain paracetamol, as too much can damage "
         "the liver.", [
            ("c", "body_site: liver -> lungs", "Too much paracetamol mainly damages a child's lungs."),
            ("s", "paraphrase: restructure",
             "Giving paracetamol in two different medicines at once could harm your child's liver."),
        ]),
    ]),
    ("leaflet", "chloramphenicol eye drops", [
        ("Chloramphenicol eye drops treat bacterial eye infections such as conjunctivitis.", [
            ("c", "condition: bacterial -> viral", "Chloramphenicol eye drops are for viral eye infections."),
            ("s", "paraphrase: synonym", "Chloramphenicol drops are used for bacterial conjunctivitis."),
        ]),
        ("Do not wear contact lenses until you have finished the treatment.", [
            ("c", "negation: dropped",
             "You can carry on wearing contact lenses while using chloramphenicol eye drops."),
            ("s", "paraphrase: restructure", "Leave your contact lenses out until the course of eye drops is over."),
        ]),
        ("See a doctor if your eye is very painful, your vision changes or it has not improved after 2 days.", [
            ("c", "severity: see a doctor -> normal",
             "A very painful eye is normal with chloramphenicol and needs no attention."),
            ("s", "paraphrase: other unit", "If the eye isn't better after 48 hours of drops, see a doctor."),
        ]),
    ]),
    ("leaflet", "nicotine patches", [
        ("Put a new nicotine patch on clean, dry, hairless skin on your upper arm, chest or hip each day.", [
            ("c", "frequency: each day -> each week", "A nicotine patch is changed once a week."),
            ("s", "paraphrase: compatible subset",
             "You can stick the day's nicotine patch on clean, hairless skin of your upper arm."),
        ]),
        ("Use a different area of skin each time to avoid irritation.", [
            ("c", "action: rotate -> same spot", "Always put the patch on exactly the same area of skin."),
            ("s", "paraphrase: synonym", "Moving the patch to a new spot each time helps prevent skin irritation."),
        ]),
        ("If the 24-hour patch gives you vivid dreams, take it off before you go to bed.", [
            ("c", "timing: remove at bedtime -> put on at bedtime",
             "If you have vivid dreams, put the 24-hour patch on just before you go to bed."),
            ("s", "paraphrase: restructure",
             "Removing the 24-hour patch at bedtime can help if it causes vivid dreams."),
        ]),
    ]),
]

PAGES = [
    ("page", "gout flare", [
        ("A gout flare usually causes sudden, severe pain in a single joint, most often the big toe.", [
            ("c", "duration: sudden -> gradual", "Gout pain usually builds up slowly over several months."),
            ("c", "body_site: big toe -> little finger", "A gout flare most often affects the little finger."),
            ("s", "paraphrase: synonym", "Gout attacks typically strike one joint abruptly, frequently the big toe."),
        ]),
        ("Rest the joint, keep it raised and apply an ice pack wrapped in a towel for up to 20 minutes at a "
         "time.", [
            ("c", "action: ice -> heat", "Put a hot water bottle on the joint during a gout flare."),
            ("s", "paraphrase: synonym",
             "During a flare, elevate the joint and use a wrapped ice pack for 20 minutes or less."),
        ]),
        ("Drinking alcohol, especially beer, and eating a lot of red meat can make flares more likely.", [
            ("c", "direction: more likely -> prevents", "Beer helps to prevent gout flares."),
            ("s", "paraphrase: synonym", "Beer and large amounts of red meat raise the chance of gout attacks."),
        ]),
    ]),
    ("page", "shingles", [
        ("Shingles usually appears as a painful rash on one side of the body, often the chest or tummy.", [
            ("c", "body_site: one side -> both sides",
             "The shingles rash usually spreads across both sides of the body."),
            ("s", "paraphrase: synonym",
             "The shingles rash typically affects just one side, commonly the chest or abdomen."),
        ]),
        ("You cannot catch shingles from someone with shingles, but they can give chickenpox to someone who has "
         "never had it.", [
            ("c", "negation: dropped", "Shingles spreads as shingles from one person to another."),
            ("s", "paraphrase: restructure",
             "A person who has never had chickenpox may catch it from someone with shingles."),
        ]),
        ("You're no longer infectious once all the blisters have dried and crusted over.", [
            ("c", "duration: ends -> continues", "You stay infectious for weeks after the blisters have crusted over."),
            ("s", "paraphrase: negation kept",
             "When every blister has scabbed over, you can't spread the virus any more."),
        ]),
    ]),
    ("page", "asthma attack", [
        ("During an asthma attack, sit up straight and take one puff of your reliever inhaler every 30 to 60 "
         "seconds, up to 10 puffs.", [
            ("c", "action: sit up -> lie down", "Lie down flat during an asthma attack."),
            ("c", "number: 10 puffs -> 50 puffs",
             "During an asthma attack you can take up to 50 puffs of your reliever."),
            ("s", "paraphrase: other unit",
             "Sitting upright, take a reliever puff every half-minute to one minute, to a maximum of ten."),
        ]),
        ("Call 999 if you do not feel better after 10 puffs or you are worried at any point.", [
            ("c", "timing: now -> next day",
             "If 10 puffs haven't helped, wait until the next day before seeking help."),
            ("s", "paraphrase: synonym", "Dial 999 if ten puffs haven't eased your symptoms."),
        ]),
        ("If the ambulance takes longer than 15 minutes, repeat the puffs.", [
            ("c", "action: repeat -> stop", "If the ambulance is more than 15 minutes away, stop using the inhaler."),
            ("s", "paraphrase: other unit",
             "Repeat the reliever puffs if the ambulance hasn't arrived within a quarter of an hour."),
        ]),
    ]),
    ("page", "DVT", [
        ("A DVT usually affects one leg, causing throbbing pain, swelling and warm, red or darkened skin.", [
            ("c", "body_site: one leg -> both legs", "A DVT usually causes swelling in both legs."),
            ("c", "direction: warm -> cold", "The skin over a DVT usually feels cold and pale."),
            ("s", "paraphrase: synonym", "Deep vein thrombosis typically makes one leg painful, swollen and warm."),
        ]),
        ("Get help urgently if you also have breathlessness or chest pain, as the clot may have travelled to your "
         "lungs.", [
            ("c", "severity: urgent -> minor",
             "Chest pain with a DVT is a minor symptom that can wait for a routine appointment."),
            ("s", "paraphrase: restructure",
             "Chest pain or shortness of breath alongside a DVT needs urgent attention because of a possible lung "
             "clot."),
        ]),
        ("Long-haul flights, surgery and being pregnant all raise your risk of a DVT.", [
            ("c", "direction: raise -> lower", "Pregnancy lowers your risk of a DVT."),
            ("s", "paraphrase: synonym", "Surgery, pregnancy and long flights increase the chance of DVT."),
        ]),
    ]),
    ("page", "sepsis", [
        ("Sepsis is a life-threatening reaction to an infection and needs emergency treatment.", [
            ("c", "severity: life-threatening -> mild",
             "Sepsis is a mild reaction to an infection that usually settles at home."),
            ("c", "negation: added", "Sepsis does not usually need emergency treatment."),
            ("s", "paraphrase: synonym",
             "Sepsis is a medical emergency caused by the body's response to an infection."),
        ]),
        ("In adults, warning signs include slurred speech or confusion, mottled or blue skin, and passing no urine "
         "in a day.", [
            ("c", "direction: no urine -> a lot of urine",
             "Passing a lot more urine than usual is a warning sign of sepsis in adults."),
            ("s", "paraphrase: synonym",
             "Confusion, blotchy or bluish skin and not peeing for a day can be signs of sepsis in adults."),
        ]),
        ("Call 999 or go to A&E if a child has a rash that does not fade when you press a glass against it.", [
            ("c", "condition: non-fading -> fading",
             "Only a rash that fades when you press a glass on it needs 999 or A&E."),
            ("s", "paraphrase: synonym", "A non-blanching rash in a child means calling 999 or going to A&E."),
        ]),
    ]),
    ("page", "urinary tract infection", [
        ("Symptoms of a urinary tract infection include pain or burning when peeing and needing to pee more often "
         "than usual.", [
            ("c", "direction: more often -> less often",
             "A urine infection typically makes you need to pee less often."),
            ("s", "paraphrase: synonym",
             "Burning on passing urine and peeing more frequently are typical UTI symptoms."),
        ]),
        ("UTIs are more common in women because they have a shorter urethra.", [
            ("c", "population: women -> men", "UTIs are more common in men than in women."),
            ("c", "causality: shorter -> longer", "Women get more UTIs because their urethra is longer."),
            ("s", "paraphrase: restructure", "Women get UTIs more often, owing to their shorter urethra."),
        ]),
        ("See a GP urgently if you are a man, are pregnant or have pain in your side or lower back with a UTI.", [
            ("c", "severity: urgent -> wait",
             "A man with UTI symptoms can usually wait a week to see whether it clears."),
            ("s", "paraphrase: compatible subset", "Pregnant women with UTI symptoms should see a GP urgently."),
            ("s", "paraphrase: compatible subset",
             "Back pain together with a urine infection is a reason to see a GP quickly."),
        ]),
    ]),
    ("page", "chickenpox in pregnancy", [
        ("If you are pregnant and have never had chickenpox, call your GP or midwife straight away if you have been "
         "near someone with it.", [
            ("c", "timing: straight away -> wait for a rash",
             "A pregnant woman exposed to chickenpox should wait for a rash before contacting anyone."),
            ("s", "paraphrase: synonym",
             "Pregnant women who have never had chickenpox and are exposed should contact their midwife or GP "
             "immediately."),
        ]),
        ("Chickenpox in pregnancy can occasionally cause serious problems for you and your baby.", [
            ("c", "safety: can be serious -> harmless", "Chickenpox in pregnancy is harmless to the baby."),
            ("s", "paraphrase: hedged",
             "Now and then, chickenpox while pregnant leads to serious complications for mother and baby."),
        ]),
        ("You may be given antiviral medicine or an injection of antibodies to lower the risk of severe illness.", [
            ("c", "direction: lower -> raise",
             "The antibody injection given after exposure makes severe chickenpox more likely."),
            ("s", "paraphrase: hedged",
             "An antibody injection or antivirals might be offered to reduce the chance of serious illness."),
        ]),
    ]),
    ("page", "colonoscopy bowel preparation", [
        ("You will need to follow a low-fibre diet for a few days before a colonoscopy and then take a laxative to "
         "empty your bowel.", [
            ("c", "food: low-fibre -> high-fibre", "Eat a high-fibre diet for a few days before a colonoscopy."),
            ("s", "paraphrase: restructure",
             "Before a colonoscopy you eat low-fibre food for several days and then use a laxative to clear your "
             "bowel."),
        ]),
        ("Keep drinking clear fluids while taking the bowel preparation, as it can make you dehydrated.", [
            ("c", "action: keep drinking -> stop drinking",
             "Stop drinking while you are taking the bowel preparation."),
            ("s", "paraphrase: restructure", "Clear fluids help prevent dehydration during bowel preparation."),
        ]),
        ("If you take iron tablets, you'll usually be asked to stop them a week before the test.", [
            ("c", "action: stop -> start",
             "You will be asked to start taking iron tablets a week before a colonoscopy."),
            ("s", "paraphrase: other unit", "Iron tablets are normally stopped 7 days before a colonoscopy."),
        ]),
    ]),
    ("page", "fasting before surgery", [
        ("You'll usually be asked to stop eating 6 hours before a general anaesthetic.", [
            ("c", "number: 6 hours -> 1 hour", "You should stop eating 1 hour before a general anaesthetic."),
            ("s", "paraphrase: synonym", "Food is typically stopped six hours before general anaesthesia."),
            ("s", "paraphrase: restructure",
             "Your last meal should usually be at least six hours before a general anaesthetic."),
        ]),
        ("You can normally drink water until 2 hours before, as this helps prevent dehydration.", [
            ("c", "number: 2 hours -> 12 hours", "You must stop drinking water 12 hours before the anaesthetic."),
            ("s", "paraphrase: other unit",
             "Drinking water is usually allowed until 120 minutes before the anaesthetic."),
        ]),
        ("Having food or drink in your stomach during an anaesthetic is dangerous because it could come up into "
         "your throat and lungs.", [
            ("c", "safety: dangerous -> safe", "Having a full stomach during an anaesthetic is perfectly safe."),
            ("s", "paraphrase: synonym",
             "Food in the stomach under anaesthetic is risky because it might be breathed into the lungs."),
        ]),
    ]),
    ("page", "blood pressure readings", [
        ("Blood pressure is recorded as two numbers: the higher systolic pressure when your heart pushes blood out, "
         "and the lower diastolic pressure when it rests between beats.", [
            ("c", "role_swap: systolic <-> diastolic",
             "Systolic pressure is measured when the heart rests between beats, and diastolic when it pushes blood "
             "out."),
            ("c", "role_swap: higher <-> lower",
             "The diastolic number is the higher of the two blood pressure numbers."),
            ("s", "paraphrase: both antonyms kept",
             "The systolic number is the higher one and reflects the heart pumping; the diastolic number is lower "
             "and is measured between beats."),
        ]),
        ("Ideal blood pressure is generally considered to be between 90/60mmHg and 120/80mmHg.", [
            ("c", "number: 120/80 -> 160/100", "Ideal blood pressure is between 140/90mmHg and 160/100mmHg."),
            ("s", "paraphrase: synonym", "A reading from 90/60 to 120/80 mmHg is usually seen as ideal."),
        ]),
        ("High blood pressure rarely causes symptoms, so the only way to find out if you have it is to get it "
         "checked.", [
            ("c", "prevalence: rarely -> usually",
             "High blood pressure usually causes obvious symptoms such as headaches."),
            ("s", "paraphrase: negation kept",
             "Most people with high blood pressure don't feel any symptoms, which is why a check is needed."),
        ]),
    ]),
    ("page", "HbA1c", [
        ("The HbA1c test shows your average blood sugar level over the past 2 to 3 months.", [
            ("c", "duration: months -> 24 hours", "An HbA1c test shows your blood sugar over the last 24 hours."),
            ("s", "paraphrase: other unit", "HbA1c reflects average glucose over roughly the previous 8 to 12 weeks."),
            ("s", "paraphrase: hedged",
             "HbA1c gives a picture of your blood sugar across the last few months rather than on a single day."),
        ]),
        ("An HbA1c of 48 mmol/mol or above means you may have diabetes.", [
            ("c", "condition: diabetes -> normal",
             "An HbA1c of 48 mmol/mol or above means your blood sugar is normal."),
            ("c", "condition: may have -> rules out", "An HbA1c of 48 mmol/mol or above rules out diabetes."),
            ("s", "paraphrase: hedged", "A result of at least 48 mmol/mol suggests possible diabetes."),
        ]),
        ("You do not need to fast before an HbA1c test.", [
            ("c", "negation: dropped", "You need to fast overnight before an HbA1c test."),
            ("s", "paraphrase: negation kept", "You can eat normally before an HbA1c blood test."),
        ]),
    ]),
    ("page", "cholesterol", [
        ("LDL is often called bad cholesterol because too much of it can clog your arteries, while HDL is known as "
         "good cholesterol.", [
            ("c", "role_swap: LDL <-> HDL", "HDL is known as bad cholesterol, and LDL as good cholesterol."),
            ("s", "paraphrase: both antonyms kept", "LDL is the bad kind of cholesterol and HDL the good kind."),
            ("s", "paraphrase: compatible subset", "Too much LDL cholesterol can block up the arteries."),
        ]),
        ("Eating less saturated fat and being more active can help lower your cholesterol.", [
            ("c", "direction: less -> more", "Eating more saturated fat helps bring cholesterol down."),
            ("s", "paraphrase: synonym", "Cutting down on saturated fat and exercising more can reduce cholesterol."),
        ]),
        ("High cholesterol does not usually cause symptoms, so you can only find out you have it from a blood "
         "test.", [
            ("c", "negation: dropped", "High cholesterol can usually be recognised from the symptoms it causes."),
            ("s", "paraphrase: negation kept",
             "High cholesterol tends to be symptomless and is detected by a blood test."),
        ]),
    ]),
    ("page", "concussion", [
        ("After a head injury, go to A&E if the person has been knocked out, is being sick or has a headache that "
         "will not go away.", [
            ("c", "severity: A&E -> home", "Being sick after a head injury can safely be managed at home."),
            ("s", "paraphrase: synonym",
             "Vomiting or a persistent headache after a blow to the head means a trip to A&E."),
        ]),
        ("Rest and avoid stressful situations for the first 2 weeks, and do not return to contact sport for at "
         "least 3 weeks.", [
            ("c", "number: 3 weeks -> 3 days", "You can go back to contact sport 3 days after a concussion."),
            ("s", "paraphrase: other unit", "Contact sport should wait for at least 21 days after a concussion."),
        ]),
        ("Do not drink alcohol until you feel better.", [
            ("c", "action: avoid -> take", "A little alcohol helps you recover after a concussion."),
            ("s", "paraphrase: synonym", "Avoid alcohol until you have recovered from the concussion."),
            ("s", "paraphrase: restructure", "Drinking alcohol should wait until you feel better after a concussion."),
        ]),
    ]),
    ("page", "febrile seizures", [
        ("Febrile seizures are fits that can happen when a child has a high temperature, most often between 6 "
         "months and 3 years old.", [
            ("c", "population: toddlers -> teenagers", "Febrile seizures mostly happen in teenagers."),
            ("s", "paraphrase: synonym",
             "Children aged six months to three years are most likely to have febrile seizures."),
        ]),
        ("During a fit, lay your child on their side on a soft surface and do not put anything in their mouth.", [
            ("c", "negation: dropped",
             "Put something in your child's mouth during a fit to stop them biting their tongue."),
            ("c", "action: side -> back", "During a fit, lay your child flat on their back."),
            ("s", "paraphrase: negation kept",
             "Place the child on their side on something soft and keep objects out of their mouth."),
        ]),
        ("Call 999 if the fit lasts longer than 5 minutes.", [
            ("c", "number: 5 minutes -> 30 minutes", "Only call 999 if the fit goes on for more than half an hour."),
            ("s", "paraphrase: synonym", "A seizure lasting over five minutes needs a 999 call."),
        ]),
    ]),
    ("page", "croup", [
        ("Croup causes a barking cough and a harsh sound when breathing in, and it is usually worse at night.", [
            ("c", "time_of_day: night -> morning", "Croup symptoms are usually at their worst in the morning."),
            ("s", "paraphrase: synonym",
             "A barking cough and noisy breathing in, often worse at night, are signs of croup."),
        ]),
        ("Most cases are mild and get better on their own within 48 hours.", [
            ("c", "severity: mild -> severe", "Most cases of croup are severe and need hospital treatment."),
            ("s", "paraphrase: other unit", "Croup is usually mild and clears up by itself within two days."),
            ("s", "paraphrase: negation kept",
             "Croup is generally not serious and tends to settle without treatment in a couple of days."),
        ]),
        ("Do not put your child in a steamy room or give them steam to breathe in, as this is not recommended.", [
            ("c", "negation: dropped", "Breathing in steam is recommended for children with croup."),
            ("s", "paraphrase: negation kept", "Steam treatments for croup are advised against."),
        ]),
    ]),
    ("page", "glue ear", [
        ("Glue ear is when the middle ear fills with sticky fluid, which can cause temporary hearing loss.", [
            ("c", "duration: temporary -> permanent", "Glue ear causes permanent hearing loss."),
            ("c", "body_site: middle ear -> outer ear", "In glue ear, sticky fluid collects in the outer ear canal."),
            ("s", "paraphrase: synonym", "The sticky fluid of glue ear may dull hearing for a while."),
        ]),
        ("It is most common in young children and usually clears up by itself within 3 months.", [
            ("c", "population: young children -> older adults", "Glue ear is most common in older adults."),
            ("c", "duration: 3 months -> years", "Glue ear usually lasts for years unless it is treated."),
            ("s", "paraphrase: synonym",
             "Glue ear mainly affects young children and often goes away on its own within three months."),
        ]),
        ("Antibiotics are not usually used, because glue ear is not normally caused by an infection that needs "
         "treating.", [
            ("c", "line_of_therapy: not used -> main treatment", "Antibiotics are the main treatment for glue ear."),
            ("c", "negation: dropped", "Antibiotics are usually used to treat glue ear."),
            ("s", "paraphrase: negation kept", "Glue ear seldom needs antibiotics."),
        ]),
    ]),
    ("page", "sunburn", [
        ("Cool the skin with a cool shower or damp towel and drink plenty of water to avoid dehydration.", [
            ("c", "direction: cool -> hot", "Soothe sunburnt skin with a hot bath."),
            ("s", "paraphrase: compatible subset", "Laying a damp towel on sunburnt skin helps cool it."),
        ]),
        ("Stay out of the sun until all signs of redness have gone.", [
            ("c", "action: avoid sun -> more sun", "Sunburnt skin benefits from more time in the sun to build a tan."),
            ("s", "paraphrase: synonym", "Keep sunburnt skin out of the sun until the redness has faded."),
        ]),
        ("Sunburn increases your risk of skin cancer, even if it does not peel or blister.", [
            ("c", "condition: always -> only if blistering",
             "Sunburn only raises your skin cancer risk if it blisters."),
            ("c", "negation: added", "Sunburn that does not peel or blister does not raise your risk of skin cancer."),
            ("s", "paraphrase: negation kept", "Even sunburn without peeling makes skin cancer more likely."),
        ]),
    ]),
    ("page", "hypoglycaemia", [
        ("A hypo is when your blood sugar level drops too low, usually below 4mmol/L.", [
            ("c", "direction: too low -> too high", "A hypo is when your blood sugar goes too high."),
            ("c", "number: below 4 -> above 11", "A hypo usually means a blood sugar above 11mmol/L."),
            ("s", "paraphrase: synonym", "Hypoglycaemia generally means a blood sugar under 4 mmol/L."),
        ]),
        ("Treat it straight away with a sugary drink or sweets, then check your blood sugar again after 10 to 15 "
         "minutes.", [
            ("c", "number: 10-15 minutes -> 2 hours",
             "After treating a hypo, wait 2 hours before checking your blood sugar again."),
            ("s", "paraphrase: synonym",
             "Have something sugary immediately and retest your sugar in 10 to 15 minutes."),
        ]),
        ("If the person is unconscious, put them in the recovery position and call 999, and do not give them "
         "anything to eat or drink.", [
            ("c", "negation: dropped", "Give an unconscious person with a hypo a sugary drink."),
            ("s", "paraphrase: negation kept",
             "Someone unconscious from a hypo should be put in the recovery position and given nothing by mouth."),
        ]),
    ]),
    ("page", "anaphylaxis", [
        ("Anaphylaxis is a severe, life-threatening allergic reaction that can develop within minutes.", [
            ("c", "duration: minutes -> days", "Anaphylaxis develops slowly over several days."),
            ("s", "paraphrase: synonym", "Anaphylaxis can come on in minutes and may be fatal."),
            ("s", "paraphrase: negation kept",
             "Anaphylaxis is no mild reaction: it is severe and can start within minutes."),
        ]),
        ("Use an adrenaline auto-injector straight away if you have one, then call 999.", [
            ("c", "timing: order reversed",
             "Call 999 first and use the adrenaline auto-injector only once the ambulance arrives."),
            ("s", "paraphrase: synonym", "Inject adrenaline immediately if one is available and then dial 999."),
        ]),
        ("Lie the person down and raise their legs, unless they are having trouble breathing, in which case help "
         "them sit up.", [
            ("c", "condition: reversed",
             "Someone with anaphylaxis who is struggling to breathe should lie flat with their legs raised."),
            ("s", "paraphrase: both antonyms kept",
             "A person with anaphylaxis who is breathless should sit up; otherwise lie them down with the legs "
             "raised."),
        ]),
    ]),
    ("page", "stroke FAST", [
        ("FAST stands for Face, Arms, Speech and Time.", [
            ("c", "entity: Time -> temperature", "In FAST, the T stands for temperature."),
            ("s", "paraphrase: restructure", "The letters of FAST stand for face, arms, speech and time."),
        ]),
        ("The face may have dropped on one side, and the person may not be able to lift both arms and keep them "
         "there.", [
            ("c", "body_site: one side -> both sides", "In a stroke, the face usually droops on both sides equally."),
            ("s", "paraphrase: negation kept",
             "The face may droop on one side, and the person may be unable to keep both arms raised."),
        ]),
        ("A stroke is a medical emergency, so call 999 immediately if you see any of these signs.", [
            ("c", "timing: immediately -> wait",
             "If you notice stroke signs, wait to see if they pass before calling for help."),
            ("s", "paraphrase: synonym", "Any FAST sign warrants an immediate 999 call."),
        ]),
    ]),
    ("page", "heat exhaustion", [
        ("Move the person to a cool place, get them to lie down and raise their feet slightly.", [
            ("c", "action: lie down -> stand", "Someone with heat exhaustion should stand up and walk about."),
            ("s", "paraphrase: synonym", "Get the person somewhere cool, lying down with their feet a little raised."),
        ]),
        ("They should drink plenty of water, and sports or rehydration drinks are fine.", [
            ("c", "safety: fine -> harmful", "Sports drinks are harmful for someone with heat exhaustion."),
            ("s", "paraphrase: compatible subset", "A rehydration drink is suitable for someone with heat exhaustion."),
        ]),
        ("Heat exhaustion does not usually need emergency care if the person cools down within 30 minutes, but "
         "heatstroke is an emergency.", [
            ("c", "role_swap: heat exhaustion <-> heatstroke",
             "Heatstroke usually needs no emergency care, but heat exhaustion is an emergency."),
            ("s", "paraphrase: both antonyms kept",
             "Heatstroke is an emergency, whereas heat exhaustion that improves within half an hour usually is not."),
        ]),
    ]),
    ("page", "hay fever", [
        ("Hay fever is an allergy to pollen and is usually worse between late March and September.", [
            ("c", "timing: spring-summer -> winter", "Hay fever is usually at its worst in the winter months."),
            ("c", "causality: allergy -> infection", "Hay fever is a viral infection."),
            ("s", "paraphrase: synonym",
             "Hay fever is a pollen allergy that tends to be worst from spring to early autumn."),
        ]),
        ("Symptoms include sneezing, a runny or blocked nose and itchy, red or watery eyes.", [
            ("c", "direction: watery -> dry", "Hay fever makes your eyes dry rather than watery."),
            ("s", "paraphrase: compatible subset", "Sneezing and watery eyes are symptoms of hay fever."),
        ]),
        ("Wearing wraparound sunglasses and showering after being outside can help keep pollen away.", [
            ("c", "direction: helps -> worsens", "Showering after being outdoors makes hay fever worse."),
            ("s", "paraphrase: hedged", "Wraparound sunglasses may help stop pollen getting into your eyes."),
        ]),
    ]),
]


def build_rows() -> list[dict]:
    """Every row of the set, sorted by id; raises AssertionError on a malformed entry."""
    rows: list[dict] = []
    counters = {"leaflet": 0, "page": 0}
    for group, _topic, sentences in LEAFLETS + PAGES:
        assert 2 <= len(sentences) <= 3, _topic
        evidence = " ".join(sentence for sentence, _claims in sentences)
        for sentence, claims in sentences:
            assert sentence in evidence
            counters[group] += 1
            n = counters[group]
            per_kind = {"c": 0, "s": 0}
            for kind, transform, claim in claims:
                assert kind in per_kind, (sentence, kind)
                family, _, detail = transform.partition(": ")
                assert family and detail, transform
                assert (family == "paraphrase") == (kind == "s"), transform
                per_kind[kind] += 1
                rows.append({
                    "id": f"nh2-{group}-{n:02d}-{kind}{per_kind[kind]}",
                    "kind": "natural_written",
                    "label": "contradicted" if kind == "c" else "supported",
                    "claim": claim,
                    "evidence": evidence,
                    "evidence_sentence": sentence,
                    "source": SOURCES[group],
                    "transform": transform,
                    "split": "heldout2",
                })
            assert per_kind["c"] >= 1 and per_kind["s"] >= 1, sentence
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids)), "duplicate ids"
    claims = [row["claim"] for row in rows]
    assert len(claims) == len(set(claims)), "duplicate claims"
    for row in rows:
        assert row["evidence_sentence"] in row["evidence"], row["id"]
        assert row["claim"] not in row["evidence"], row["id"]
    return sorted(rows, key=lambda row: row["id"])


def render(rows: list[dict]) -> str:
    """The JSONL text: one object per line, keys in a fixed order, UTF-8 kept as is."""
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def main() -> int:
    rows = build_rows()
    OUT.write_text(render(rows), encoding="utf-8")
    labels = {label: sum(row["label"] == label for row in rows) for label in ("contradicted", "supported")}
    print(f"wrote {len(rows)} rows to {OUT} ({labels})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
