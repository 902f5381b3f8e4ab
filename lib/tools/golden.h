// `vgen golden`: runs the fixture cases of tests/golden (format: tests/golden/README.md) with the
// recipe's device, precision and parallel_config. Every rank runs each case (collectively);
// world rank 0 prints one line per metric and the summary. The scheduler, image and whole-pipeline
// cases run here; a component's case (text_encode, dit_forward, vae_decode, ...) runs in the family of
// the case's model (ModelFamily::run_golden_case).
#pragma once
#include <string>

#include "dist/mesh.h"
#include "io/recipe.h"
#include "model/golden_case.h"

namespace vgen {

void golden_scheduler(GoldenCase& c);  // sched_unipc, sched_unipc_shift, sched_euler
void golden_pipeline(GoldenCase& c);   // pipeline_*: the whole pipeline of the case's model
void golden_image_resize(GoldenCase& c);  // image_resize: decoding and Pillow's resampling

// Runs all cases (or one); returns the number of failed cases. Prints on world rank 0.
int run_golden(const std::string& fixtures_dir, const Recipe& recipe, Mesh& mesh, const std::string& only_case);

}  // namespace vgen
