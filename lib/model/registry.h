// The model families vgen renders, and the one a checkpoint belongs to (docs/adding_a_model.md).
// A family is picked from model_index.json's `_class_name` and its component configs; anything
// else is refused by name (kModel, exit 4) before a weight is read.
#pragma once
#include <string>
#include <vector>

#include "dist/mesh.h"
#include "io/diffusers_dir.h"
#include "io/recipe.h"
#include "model/golden_case.h"
#include "model/model.h"
#include "model/plan_facts.h"
#include "model/size_limits.h"

namespace vgen {

class ModelFamily {
 public:
  virtual ~ModelFamily() = default;
  virtual std::string name() const = 0;
  // The model_index.json `_class_name`s it renders, for messages (e.g. "WanPipeline").
  virtual std::string pipeline_classes() const = 0;
  // Whether this family renders the pipeline directory `dir` (reads configs only).
  virtual bool accepts(const DiffusersDir& dir) const = 0;
  // The checkpoint's traits from its configs (no weights).
  virtual ModelTraits traits(const DiffusersDir& dir) const = 0;
  // The still images the checkpoint takes on a prompt line (docs/batch.md "Image inputs"), from
  // model_index.json alone, so it is known even for a checkpoint whose other configs are refused.
  virtual ImageInputs image_inputs(const DiffusersDir& dir) const { return {}; }
  // Every component this family needs is listed and its config parses (kModel naming the
  // component); returns the DiT's self-attention heads. Then, once the mesh is checked against
  // them, every safetensors header and offset (check_weights). Run by every rank before any
  // collective.
  virtual int check_configs(const DiffusersDir& dir) const = 0;
  virtual void check_weights(const DiffusersDir& dir) const = 0;
  // Recipe settings checked against the model's configs before any weight is read (kRecipe).
  virtual void check_recipe(const Recipe& recipe, const DiffusersDir& dir) const {}
  // The sizes the checkpoint can render (model/size_limits.h) from its configs: the VAE's factors,
  // the DiT's patch and position tables, the text side's token limit (kModel on a bad config).
  virtual SizeLimits size_limits(const DiffusersDir& dir) const = 0;
  // Loads what this rank of `mesh` needs (model.h LoadedModel). Device placement, streaming,
  // LoRA, quantisation and weight sharing as the recipe says; collective over the world.
  virtual LoadedModel load(const Recipe& recipe, Mesh& mesh) const = 0;
  // What `vgen plan` and its time model need (model/plan_facts.h); headers false: configs only.
  virtual PlanModel plan_model(const Recipe& recipe, bool read_headers) const = 0;
  // The recipe's LoRAs checked against the model (headers read, nothing merged), for `vgen plan`.
  virtual std::vector<PlanLora> plan_loras(const Recipe& recipe) const { return {}; }
  // Runs a golden fixture case of kind `kind` on a component of this family (tests/golden/README.md);
  // false when the family has no such kind.
  virtual bool run_golden_case(const std::string& kind, GoldenCase& c) const { return false; }
  // Whether run_golden_case serves the component cases of `dir` though the family does not render
  // its pipeline (yet): components it knows inside a pipeline class it refuses (accepts stays false,
  // so `vgen run` and `vgen plan` still refuse the checkpoint by name).
  virtual bool runs_components_of(const DiffusersDir& dir) const { return false; }
};

// Every registered family.
const std::vector<const ModelFamily*>& model_families();
// The family of the pipeline directory `dir`; kModel naming its `_class_name` when none accepts it.
const ModelFamily& model_family(const DiffusersDir& dir);
// The family whose component golden runners serve `dir`: model_family's, else one whose
// runs_components_of accepts it; model_family's refusal when none does.
const ModelFamily& component_family(const DiffusersDir& dir);

}  // namespace vgen
