"""Words that frame a question (another name of its substance, the asker's purpose) against words that change what is computed.

The starter library's own tasks are lifted as the generaliser lifts them; each question is one a scientist
might type around the same request, and each adversarial one hides a change of method in the framing.
"""

import json
from pathlib import Path

import pytest

from skills.binding import BindingDeclined, bind
from skills.context import data_sources, framing_words, instruction_words, substance_names
from skills.mentions import find_mentions
from skills.terms import explaining_forms
from tests.skills.test_binding import lifted, rocksalt

LIBRARY = Path(__file__).resolve().parents[2] / "skills" / "library"


def library_skill(name: str, keep: tuple[str, ...] | None = None):
    task = json.loads((LIBRARY / f"{name}.json").read_text())
    return lifted(task["solution_code_or_process"], task["user_query"]["1"], keep)


def test_a_framing_sentence_of_the_askers_own_is_passed_over_and_a_request_is_not():
    query = "I'm filtering a set of antidiabetics. How many donors does metformin have? Return an integer."
    assert {"antidiabetics", "filtering"} <= framing_words(query, find_mentions(query))
    assert framing_words("Use the exact mass. What is the mass of caffeine?", []) == set()  # a request, not the asker's
    assert framing_words("We work with monoisotopic masses. What is the mass of caffeine?", []) == set()  # says how
    assert framing_words("We study NaCl at 5.64 Å. What is its density?", find_mentions("We study NaCl at 5.64 Å. What is its density?")) == set()


def test_a_purpose_before_the_request_is_framing_but_never_a_modifier_or_an_adjective():
    query = "For a fertiliser spec sheet I need the nitrogen mass fraction of NH4NO3."
    assert {"fertiliser", "spec", "sheet"} <= framing_words(query, find_mentions(query))
    tricky = "For our deuterated average samples I need the molar mass of D2O."
    assert not {"deuterated", "average"} & framing_words(tricky, find_mentions(tricky))


def test_another_name_of_the_given_formula_is_its_name():
    query = "We're screening spinel compositions. Is MgAl2O4 valid according to SMACT?"
    assert "spinel" in substance_names(query, find_mentions(query))
    assert "spinel" not in substance_names("Is spinel valid? Check MgO.", find_mentions("Is spinel valid? Check MgO."))
    aside = "Molar mass of LiFePO4 (the battery cathode) with pymatgen?"
    assert {"battery", "cathode"} <= substance_names(aside, find_mentions(aside))
    for other in ("Molar mass of CuSO4 (pentahydrate)?", "Molar mass of Fe2O3 (dimer)?", "Mn in KMnO4 (the manganate)?"):
        assert substance_names(other, find_mentions(other)) == set()  # an aside that names another substance is no other name


@pytest.mark.parametrize(
    ("library", "query", "expected"),
    [
        (
            "smact_validity_cspbi3",
            "We're screening spinel compositions. Does MgAl2O4 pass SMACT's screening rules? Answer true or false.",
            {"formula": "MgAl2O4"},
        ),
        (
            "pymatgen_molar_mass_fe2o3",
            "Molar mass of LiFePO4 (the battery cathode) according to pymatgen, in g/mol? Return a float rounded to 4 decimal places.",
            {"formula": "LiFePO4"},
        ),
        (
            "pymatgen_oxidation_state_mn_kmno4",
            "We're looking at thin films. What is the oxidation state of copper in Cu2O, as guessed by pymatgen? Return an integer.",
            {"element": "Cu", "formula": "Cu2O"},
        ),
    ],
)
def test_a_skill_of_a_substance_alone_answers_through_framing_words(library, query, expected):
    assert bind(library_skill(library), query).params == expected


@pytest.mark.parametrize(
    ("library", "query", "reason"),
    [
        (  # a change of quantity dressed as the asker's habit
            "pymatgen_molar_mass_fe2o3",
            "Our lab reports monoisotopic masses. What is the molar mass of Fe2O3 according to pymatgen? Return a float rounded to 4 decimal places.",
            "monoisotopic",
        ),
        (  # a sentence that says how to compute is no framing
            "pymatgen_molar_mass_fe2o3",
            "We use isotope-averaged masses of the minerals only. What is the molar mass of Fe2O3 according to pymatgen? Return a float rounded to 4 decimal places.",
            "isotope",
        ),
        (  # a mineral name carries a structure: a skill that builds one never passes it over
            "pymatgen_rocksalt_density_nacl",
            "What is the density (unit: g/cm^3) of rutile TiO2 with a cubic lattice constant of 4.59 Å, computed with pymatgen? Return a float rounded to 4 decimal places.",
            "rutile",
        ),
        (
            "pymatgen_rocksalt_density_nacl",
            "We're looking at rutile films. What is the density (unit: g/cm^3) of TiO2 with a cubic lattice constant of 4.59 Å, computed with pymatgen? Return a float rounded to 4 decimal places.",
            "rutile|films",
        ),
    ],
)
def test_framing_that_hides_another_computation_still_declines(library, query, reason):
    with pytest.raises(BindingDeclined, match=reason):
        bind(library_skill(library), query)


def test_a_framing_sentence_ends_at_its_full_stop_whatever_follows_but_not_at_an_abbreviation():
    query = "We're looking at sputtered films. pymatgen Composition('Cu2O').oxi_state_guesses(): what is the Cu oxidation state? Return an integer."
    assert "sputtered" not in framing_words(query, find_mentions(query)) and "films" in framing_words(query, find_mentions(query))
    mineral = "We're looking at cuprite films. What is the Cu oxidation state in Cu2O?"  # a mineral's name: never passed over
    assert "cuprite" not in framing_words(mineral, find_mentions(mineral))
    glued = "We use, e.g. the monoisotopic masses. What is the mass of caffeine?"  # one sentence, and it says how
    assert framing_words(glued, find_mentions(glued)) == set()


@pytest.mark.parametrize(
    ("library", "query"),
    [  # what an attack on the framing, asides and restatements found: each would have been answered wrongly
        ("pymatgen_molar_mass_fe2o3", "What is the molar mass (unit: g/mol) of CuSO4 (pentahydrate) according to pymatgen? Return a float rounded to 4 decimal places."),
        ("pymatgen_molar_mass_fe2o3", "What is the molar mass (unit: g/mol) of Fe2O3 (dimer) according to pymatgen? Return a float rounded to 4 decimal places."),
        ("pymatgen_molar_mass_fe2o3", "We're studying the dihydrate. What is the molar mass (unit: g/mol) of CaSO4 according to pymatgen? Return a float rounded to 4 decimal places."),
        ("pymatgen_molar_mass_fe2o3", "What is the molar mass (unit: g/mol) of H2O (deuterium oxide) according to pymatgen? Return a float rounded to 4 decimal places."),
        ("pymatgen_molar_mass_fe2o3", "What is the molar mass (unit: g/mol) of Fe3O4 (hematite) according to pymatgen? Return a float rounded to 4 decimal places."),
        ("pymatgen_oxidation_state_mn_kmno4", "What is the oxidation state of manganese in KMnO4 (the manganate), as guessed by pymatgen? Return an integer."),
        ("rdkit_molwt_aspirin", "Our tables leave out hydrogens. What is the molecular weight (unit: g/mol) of aspirin (SMILES CC(=O)Oc1ccccc1C(=O)O) according to RDKit? Return a float rounded to 4 decimal places."),
        ("smact_validity_cspbi3", "Our screen skips the electronegativity test. Is CSe a chemically valid composition according to SMACT's screening rules? Return true or false."),
        ("rdkit_tpsa_ethanol", "Our team adds thiols and phosphines too. What is the topological polar surface area (unit: Å^2) of cysteine (SMILES NC(CS)C(=O)O) according to RDKit? Return a float rounded to 4 decimal places."),
        ("rdkit_hbond_donors_acceptors_paracetamol", "We're after the NOCount and NHOHCount. How many hydrogen-bond donors and acceptors does paracetamol (SMILES CC(=O)Nc1ccc(O)cc1) have according to RDKit? Return a list [donors, acceptors] of integers."),
        ("rdkit_aromatic_rings_naphthalene", "Our team skips heterocycles. How many aromatic rings does pyridine (SMILES c1ccncc1) have according to RDKit? Return an integer."),
        ("rdkit_logp_ibuprofen", "What water/octanol partition coefficient does RDKit estimate for ibuprofen, SMILES CC(C)Cc1ccc(cc1)C(C)C(=O)O? Return a float rounded to 4 decimal places."),
        ("rdkit_logp_ibuprofen", "What air/water partition coefficient does RDKit estimate for ibuprofen, SMILES CC(C)Cc1ccc(cc1)C(C)C(=O)O? Return a float rounded to 4 decimal places."),
        ("rdkit_logp_ibuprofen", "What octanol/water distribution coefficient does RDKit estimate for ibuprofen, SMILES CC(C)Cc1ccc(cc1)C(C)C(=O)O? Return a float rounded to 4 decimal places."),
        ("ase_emt_cu_vacancy_formation", "What is the unrelaxed vacancy formation energy (unit: eV) of copper (fcc, a = 3.6 Å) in a 3x3x3 supercell of the conventional cubic cell with 3 atoms removed, computed with ASE's EMT calculator? Return a float rounded to 4 decimal places."),
        ("ase_emt_cu_vacancy_formation", "What is the unrelaxed vacancy formation energy (unit: eV) of copper (fcc, a = 3.6 Å) in bulk('Cu','fcc',a=3.6,cubic=True).repeat((2,2,2)), computed with ASE's EMT calculator? Return a float rounded to 4 decimal places."),
        ("pymatgen_rocksalt_density_nacl", "What is the density (unit: g/cm^3) of rock-salt NaCl with a cubic lattice constant of 5.64 Å and a 5.64 Å vacuum layer, computed with pymatgen? Return a float rounded to 4 decimal places."),
        ("pymatgen_hcp_cell_volume_mg", "What is the volume (unit: Å^3) of the hexagonal unit cell of magnesium with a = 3.209 Å, b = 5.211 Å and c = 5.211 Å, computed with pymatgen? Return a float rounded to 4 decimal places."),
        ("ase_lj_dimer_distance", "What is the equilibrium separation (unit: Å) of a Lennard-Jones dimer with sigma = 2.0 Å, epsilon = 1.0 eV and a cutoff rc = 1.2 sigma, found by relaxing it in ASE from a starting distance of 2.3 Å to fmax = 1e-5 eV/Å? Return a float rounded to 4 decimal places."),
        ("ase_lj_dimer_distance", "What is the equilibrium separation (unit: Å) of a Lennard-Jones dimer relaxed in ASE with LennardJones(sigma=1.0, epsilon=1.0, rc=10.0) from a starting distance of 1.5 Å, BFGS(dimer).run(steps=3). Return a float rounded to 4 decimal places."),
        ("ase_lj_dimer_distance", "What is the equilibrium separation (unit: Å) of a Lennard-Jones dimer relaxed in ASE with LennardJones(sigma=1.0, epsilon=1.0, rc=2.0, ro=1.0, smooth=True) from a starting distance of 1.5 Å to fmax = 1e-5 eV/Å? Return a float rounded to 4 decimal places."),
        ("pymatgen_xrd_cu_strongest_peak", "At what 2-theta angle (unit: degrees) is the strongest powder diffraction peak of fcc copper (a = 3.615 Å) with XRDCalculator(wavelength=0.7107)? Return a float rounded to 4 decimal places."),
        ("spglib_symmetry_operations_si", "How many symmetry operations does spglib find for ase.build.bulk('Si', 'diamond', a=5.431)? Return an integer."),
    ],
)
def test_what_an_attack_on_framing_asides_and_restatements_found_declines(library, query):
    with pytest.raises(BindingDeclined):
        bind(library_skill(library), query)


def test_the_same_value_restated_outside_code_or_by_another_name_declines_and_a_product_in_code_binds():
    dimer = library_skill("ase_lj_dimer_distance")
    product = "What is the equilibrium separation (unit: Å) of a Lennard-Jones dimer relaxed in ASE with LennardJones(sigma=2.0, epsilon=1.0, rc=1.2*2.0) from a starting distance of 2.5 Å to fmax = 1e-5 eV/Å? Return a float rounded to 4 decimal places."
    assert bind(dimer, product).params["rc"] == 2.4


@pytest.mark.parametrize(
    ("library", "query", "expected"),
    [  # a mineral or chemical name of the very formula given is the formula's other name
        (
            "pymatgen_oxidation_state_mn_kmno4",
            "We're looking at cuprite films. pymatgen Composition('Cu2O').oxi_state_guesses() -> what is the Cu oxidation state in the top-ranked guess? Return it as an integer.",
            {"element": "Cu", "formula": "Cu2O"},
        ),
        (
            "pymatgen_molar_mass_fe2o3",
            "I'm weighing out chalcopyrite (CuFeS2) for a leaching run and need its molar mass from pymatgen's Composition weight. Units g/mol; give a float rounded to 4 decimal places.",
            {"formula": "CuFeS2"},
        ),
        (
            "pymatgen_oxygen_mass_fraction_al2o3",
            "Magnetite: what's the mass fraction of Fe in Fe3O4, with pymatgen? Return a float between 0 and 1 rounded to 4 decimal places.",
            {"formula": "Fe3O4", "element": "Fe"},
        ),
        (
            "pymatgen_rocksalt_density_nacl",
            "Periclase (MgO) has the rock-salt structure with a = 4.212 Å. What density (unit: g/cm^3) does pymatgen give? Return a float rounded to 4 decimal places.",
            {"crystal": rocksalt("Mg", "O"), "a": 4.212},
        ),
    ],
)
def test_another_name_of_the_formula_binds(library, query, expected):
    assert bind(library_skill(library), query).params == expected


@pytest.mark.parametrize(
    ("library", "query", "reason"),
    [
        (  # a skill that builds a structure: a mineral name says which, unless the question states the structure itself
            "pymatgen_rocksalt_density_nacl",
            "What is the density (unit: g/cm^3) of periclase MgO with a cubic lattice constant of 4.212 Å, computed with pymatgen? Return a float rounded to 4 decimal places.",
            "periclase",
        ),
        (  # the prototype library builds cinnabar in another space group than the rock-salt structure stated
            "pymatgen_rocksalt_density_nacl",
            "Cinnabar (HgS) in the rock-salt structure with a = 5.85 Å: what density (unit: g/cm^3) does pymatgen give? Return a float rounded to 4 decimal places.",
            "(?i)cinnabar",
        ),
        (  # a name of another formula than the one given
            "pymatgen_oxygen_mass_fraction_al2o3",
            "Hematite: what's the mass fraction of Fe in Fe3O4, with pymatgen? Return a float between 0 and 1 rounded to 4 decimal places.",
            "(?i)hematite",
        ),
        (  # the asker's framing never passes over a word that can change the structure a skill builds
            "pymatgen_rocksalt_density_nacl",
            "I'm setting up a KCl slab model. What is the density (unit: g/cm^3) of rock-salt KCl with a cubic lattice constant of 6.293 Å, computed with pymatgen? Return a float rounded to 4 decimal places.",
            "slab",
        ),
    ],
)
def test_a_name_or_framing_that_can_say_another_structure_declines(library, query, reason):
    with pytest.raises(BindingDeclined, match=reason):
        bind(library_skill(library), query)


def test_framing_of_a_skill_that_builds_a_structure_binds_and_a_compound_of_its_code_explains_its_parts():
    volume = "I'm tabulating cell volumes for a review. What is the volume (unit: Å^3) of a hexagonal unit cell with a = 2.665 Å and c = 4.947 Å, computed with pymatgen? Return a float rounded to 4 decimal places."
    assert bind(library_skill("pymatgen_hcp_cell_volume_mg"), volume).params == {"a": 2.665, "c": 4.947}
    group = "Build rock-salt KCl from space group Fm-3m with a = 6.293 Å in pymatgen: what is its density (unit: g/cm^3)? Return a float rounded to 4 decimal places."
    assert bind(library_skill("pymatgen_rocksalt_density_nacl"), group).params == {"crystal": rocksalt("K", "Cl"), "a": 6.293}


def test_a_framing_sentence_that_names_what_the_skill_counts_is_framing_and_one_that_limits_it_is_not():
    skill = library_skill("rdkit_fragments_benzyl")
    framed = (
        "I'm comparing fragment counts across a few analgesics. For paracetamol (acetaminophen), SMILES CC(=O)Nc1ccc(O)cc1, how "
        "many entries does an RDKit FragmentCatalog hold after adding the molecule, with fragment path lengths 1-6 and RDKit's "
        "default FunctionalGroups.txt? Return an integer."
    )
    assert bind(skill, framed).params["smiles"] == "CC(=O)Nc1ccc(O)cc1"
    limited = framed.replace("I'm comparing fragment counts", "We're counting only ring fragments")
    with pytest.raises(BindingDeclined, match="analgesics"):
        bind(skill, limited)


def test_a_structure_type_beside_a_composition_says_nothing_of_it_and_everything_of_a_structure():
    olivine = "Molar mass of LiFePO4 (the olivine cathode) from pymatgen's Composition(...).weight, in g/mol? Float, 4 decimals."
    assert bind(library_skill("pymatgen_molar_mass_fe2o3"), olivine).params == {"formula": "LiFePO4"}
    density = "What is the density (unit: g/cm^3) of LiFePO4 (the olivine cathode) with a = 5.64 Å, computed with pymatgen? Return a float rounded to 4 decimal places."
    with pytest.raises(BindingDeclined, match="olivine"):
        bind(library_skill("pymatgen_rocksalt_density_nacl"), density)


def test_an_interval_of_the_answers_form_is_no_value():
    query = (
        "For a fertiliser spec sheet I need the nitrogen mass fraction of ammonium nitrate, NH4NO3. "
        "Compute it with pymatgen's Composition and return a float in [0, 1] rounded to 4 decimal places."
    )
    assert bind(library_skill("pymatgen_oxygen_mass_fraction_al2o3"), query).params == {"element": "N", "formula": "NH4NO3"}


def test_a_framing_sentence_frames_until_it_says_how_and_a_limiting_word_frames_nothing():
    vocabulary = explaining_forms({"aromatic", "ring", "count", "rdkit"})
    filtering = "We're filtering a statin set by aromatic ring count. For quinine, how many?"
    assert {"filtering", "statin"} <= framing_words(filtering, [], vocabulary=vocabulary)
    ranking = "We're ranking statins by lipophilicity. For lidocaine, what logP?"
    assert "statins" in framing_words(ranking, []) and "lipophilicity" not in framing_words(ranking, [])  # said how: explained or not
    assert framing_words("We're counting only heavy atoms in statins. How many?", [], vocabulary=vocabulary) == set()
    assert framing_words("I'm screening statins without hydrogens. How many?", [], vocabulary=vocabulary) == set()
    # the asker's activity written as a gerund; "out" of a verb that says no how is no limiting word
    weighing = "Weighing out precursors for a cathode batch. What is the molar mass of LiFePO4?"
    assert {"weighing", "precursors", "cathode", "batch"} <= framing_words(weighing, find_mentions(weighing))
    assert framing_words("Leaving out the hydrate water. What is the molar mass of CuSO4?", []) == set()
    assert framing_words("Using pymatgen only. What is the molar mass of CuSO4?", []) == set()
    # a name in capitals never frames: "our TFA batch" is a salt, "our ILL diffractometer" neutrons
    nsaid = "We're comparing lipophilicity across our NSAID set. What does RDKit give as the logP of diclofenac?"
    assert "nsaid" not in framing_words(nsaid, find_mentions(nsaid)) and "comparing" in framing_words(nsaid, find_mentions(nsaid))
    # what is done to the substance, written as a gerund, is no asker's activity: it frames nothing
    for done in ("Deprotonating the acid group.", "Hydrating it before weighing out.", "Straining it along c.", "Doubling the formula."):
        assert framing_words(f"{done} What is the molar mass of Fe2O3?", []) == set(), done
    assert instruction_words("Deprotonating the acid group. We're hydrogenating it. Checking symmetry first. What is it?") == ["deprotonating", "hydrogenating"]


def test_a_space_group_symbol_and_an_accented_name_are_read_whole():
    from skills.mentions import question_words

    words = [w for w, _, _ in question_words("Rutile TiO2 (P4_2/mnm) next to wüstite FeO in Fm-3m")]
    assert "mnm" not in words and "fm" not in words and "wustite" in words


@pytest.mark.parametrize(
    ("library", "query"),
    [  # what an attack on name, framing, call and lattice matching found: each would have been answered wrongly
        ("ase_emt_cu_bulk_modulus", "Nickel, fcc, ASE EMT: bulk modulus in GPa from an EquationOfState fit to the energies of bulk('Ni', 'fcc', a=a) for cell volumes numpy.linspace(10.0, 11.8, 9). Float, 4 decimal places."),
        ("ase_emt_cu_bulk_modulus", "Nickel, fcc, ASE EMT: bulk modulus in GPa from an EquationOfState fit to the energies of bulk('Ni', 'fcc', a=a) for lattice constants numpy.linspace(3.42, 3.62, 9, False). Float, 4 decimal places."),
        ("pymatgen_oxygen_mass_fraction_al2o3", "What is the oxygen content of Al2O3 as a mole fraction, computed with pymatgen? Return a float between 0 and 1 rounded to 4 decimal places."),
        ("spglib_spacegroup_nacl", "What is the Hermann-Mauguin symbol of the point group of rock-salt NaCl with a = 5.64 Å, as found by spglib? Return a string."),
        ("pymatgen_hcp_cell_volume_mg", "What is the volume (unit: Å^3) of the hexagonal unit cell with a = 2.951 Å, computed with pymatgen? Return a float rounded to 4 decimal places."),
        ("pymatgen_hcp_cell_volume_mg", "What is the volume (unit: Å^3) of the unit cell of graphite with a = 2.46 Å and c = 6.70 Å, computed with pymatgen? Return a float rounded to 4 decimal places."),
        ("rdkit_logp_ibuprofen", "What octanol/water partition coefficient does RDKit estimate for the keto form of acetylacetone, SMILES CC(O)=CC(C)=O? Return a float rounded to 4 decimal places."),
        ("ase_emt_cu_lattice_constant", "I'm studying gold nanoclusters. What is the equilibrium fcc lattice constant (unit: Å) predicted by ASE's EMT potential, from an equation-of-state fit over 11 evenly spaced lattice constants from 4.0 to 4.2 Å? Return a float rounded to 4 decimal places."),
        ("pymatgen_si_nearest_neighbour", "Graphite (C, space group P6_3/mmc) has a = 2.46 Å. What is the nearest-neighbour C-C distance (unit: Å), computed with pymatgen by searching the neighbours of one atom within 3.0 Å? Return a float rounded to 4 decimal places."),
        ("pymatgen_molar_mass_fe2o3", "What is the molar mass (unit: g/mol) of magnetite (Fe2O3) according to pymatgen? Return a float rounded to 4 decimal places."),
    ],
)
def test_what_an_attack_on_names_framing_calls_and_lattices_found_declines(library, query):
    with pytest.raises(BindingDeclined):
        bind(library_skill(library), query)


@pytest.mark.parametrize(
    "query",
    [  # a name of another compound of the same elements beside a formula is a second substance
        "What is the oxidation state of sodium in sodium sulfite (Na2SO4), as guessed by pymatgen? Return an integer.",
        "What is the oxidation state of Cu in cuprous oxide (CuO), as guessed by pymatgen? Return an integer.",
    ],
)
def test_a_specific_name_of_another_compound_beside_a_formula_declines(query):
    with pytest.raises(BindingDeclined):
        bind(library_skill("pymatgen_oxidation_state_mn_kmno4"), query)


def test_a_generic_or_matching_name_beside_a_formula_names_it():
    skill = library_skill("pymatgen_oxidation_state_mn_kmno4")
    ask = "What is the oxidation state of {} in {}, as guessed by pymatgen? Return an integer."
    assert bind(skill, ask.format("iron", "iron oxide (Fe3O4)")).params == {"element": "Fe", "formula": "Fe3O4"}
    assert bind(skill, ask.format("Cu", "cuprous oxide (Cu2O)")).params == {"element": "Cu", "formula": "Cu2O"}
    assert bind(skill, ask.format("sodium", "sodium sulfate (Na2SO4)")).params == {"element": "Na", "formula": "Na2SO4"}


@pytest.mark.parametrize(
    ("library", "query"),
    [  # what a second attack found: each would have been answered wrongly
        ("pymatgen_xrd_cu_strongest_peak", "At what 2-theta angle (unit: degrees) is the highest-angle Cu K-alpha powder diffraction peak of fcc copper (a = 3.615 Å), computed with pymatgen? Return a float rounded to 4 decimal places."),
        ("rdkit_fragments_benzyl", "Count the total number of molecular fragments for OCc1ccccc1CN using RDKit with fragment path lengths in [0, 1] and RDKit's default functional groups file. Return an integer."),
        ("rdkit_fragments_benzyl", "Count the total number of molecular fragments for OCc1ccccc1CN using RDKit with fragment path lengths 1 to 6 and the functional groups in my_functional_groups.txt. Return an integer."),
        ("ase_emt_cu_vacancy_formation", "We're tabulating values for divacancies. What is the unrelaxed vacancy formation energy (unit: eV) of copper (fcc, a = 3.6 Å) in a 3x3x3 supercell of the conventional cubic cell, computed with ASE's EMT calculator? Return a float rounded to 4 decimal places."),
        ("rdkit_molwt_aspirin", "We're tabulating weights for the methyl esters. What is the molecular weight (unit: g/mol) of aspirin (SMILES CC(=O)Oc1ccccc1C(=O)O) according to RDKit? Return a float rounded to 4 decimal places."),
        ("pymatgen_rocksalt_density_nacl", "We're tabulating values for the melts. What is the density (unit: g/cm^3) of rock-salt NaCl with a cubic lattice constant of 5.64 Å, computed with pymatgen? Return a float rounded to 4 decimal places."),
    ],
)
def test_what_a_second_attack_found_declines(library, query):
    with pytest.raises(BindingDeclined):
        bind(library_skill(library), query)


def test_the_answers_range_is_no_value_but_a_range_of_a_setting_is():
    skill = library_skill("pymatgen_oxygen_mass_fraction_al2o3")
    assert bind(skill, "What fraction of the mass of Fe2O3 is oxygen, computed with pymatgen? Return a float in [0, 1] rounded to 4 decimal places.").params == {"formula": "Fe2O3", "element": "O"}


def test_another_method_named_only_in_the_askers_framing_is_passed_over_where_the_question_names_the_skills_own():
    vocabulary = explaining_forms("emt ase bulk potential energy atom lattice calculator pymatgen".split())
    for query in [
        "For a quick sanity check of my DFT numbers I'd like the equilibrium lattice parameter of fcc aluminium that ASE's EMT potential predicts.",
        "I'm sanity-checking a toy potential workflow before moving on to DFT. For fcc nickel, a = 3.52 Å, what energy per atom does ASE's EMT calculator give?",
    ]:
        assert "dft" in framing_words(query, find_mentions(query), vocabulary=vocabulary), query
        assert "dft" in framing_words(query, find_mentions(query), structural=True, vocabulary=vocabulary), query  # names no structure
    for query in [
        "I'm checking this with DFT instead of EMT. What is the lattice constant of Cu from ASE?",  # says how: instead
        "For my DFT benchmark table I need the DFT lattice constant of Cu from ASE's EMT.",  # DFT asked for outside the framing
        "For my benchmark table I need the lattice constant of Cu computed with DFT (PBE).",  # no method of the skill's said
    ]:
        assert "dft" not in framing_words(query, find_mentions(query), vocabulary=vocabulary), query


def test_report_after_a_determiner_is_a_noun_of_the_framing_and_says_no_how():
    query = "I'm preparing a lab report on ceramics and need a value to compare against my measurement. What is the density of NaCl?"
    assert {"lab", "report", "measurement"} <= framing_words(query, find_mentions(query))
    query = "I'm preparing to report the density with a slab model. What is the density of NaCl?"
    assert "slab" not in framing_words(query, find_mentions(query))  # "report" the verb: what follows says how


def test_a_preposition_ending_in_ing_opens_no_instruction():
    assert instruction_words("According to ASE's EMT potential, what is the bulk modulus of fcc Ni?") == []
    assert instruction_words("Doubling the formula. What is the molar mass?") == ["doubling"]


def test_the_method_given_energies_came_from_is_named_as_their_source():
    assert data_sources("Given DFT total energies per formula unit Mg = -1.6 eV, O2 = -9.86 eV") == {"dft"}
    assert data_sources("Using PBE-computed energies: Li 0.0, O2 0.0") == {"pbe"}
    assert data_sources("Given these PBE total energies: Li 0.0, O2 0.0, what is the PBE formation energy?") == set()  # asked of PBE too
    assert data_sources("What is the DFT band gap of Si?") == set()
