"""Fix tasks (SPEC 11): can a coding model reproduce a historical fix, graded by its tests?"""
