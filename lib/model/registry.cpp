#include "model/registry.h"

#include "model/cosmos3/family.h"
#include "model/wan/family.h"
#include "model/wan/lent_vae.h"

namespace vgen {

const std::vector<const ModelFamily*>& model_families() {
  static const WanFamily wan;
  static const Cosmos3Family cosmos3(&load_wan_vae_autoencoder, &plan_lent_wan_vae);  // the Wan 2.2 VAE
  static const std::vector<const ModelFamily*> all = {&wan, &cosmos3};
  return all;
}

const ModelFamily& model_family(const DiffusersDir& dir) {
  for (const ModelFamily* f : model_families())
    if (f->accepts(dir)) return *f;
  const std::string cls = dir.pipeline_class().empty() ? std::string("(none)") : dir.pipeline_class();
  std::string names;
  for (const ModelFamily* f : model_families())
    names += (names.empty() ? "" : "; ") + f->name() + ": " + f->pipeline_classes();
  VGEN_THROW(ExitCode::kModel, "{}/model_index.json: _class_name {} is not a pipeline vgen renders (families: {})",
             dir.root(), cls, names);
}

const ModelFamily& component_family(const DiffusersDir& dir) {
  for (const ModelFamily* f : model_families())
    if (f->accepts(dir)) return *f;
  for (const ModelFamily* f : model_families())
    if (f->runs_components_of(dir)) return *f;
  return model_family(dir);
}

}  // namespace vgen
