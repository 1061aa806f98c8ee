"""DOC72 intake (seed 003 §20, §20A–C, §22–25, §29–30, §38): observation envelopes, the significance funnel,
memory modes, the extraction queue and budgets, and the miners that turn conversations into goals, obligations,
procedures, standing procedures, memory directives and corrections. Everything durable is written through
``kenning.knowledge.writer``."""
