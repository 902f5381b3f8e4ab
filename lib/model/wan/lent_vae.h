// The Wan VAE as the autoencoder of another family's checkpoint (Cosmos 3 decodes with the Wan 2.2
// VAE): the registry hands load_wan_vae_autoencoder to that family, so that neither includes the
// other. Placement, streaming and warm-up as the Wan family's own load does them.
#pragma once
#include <memory>

#include "dist/mesh.h"
#include "io/diffusers_dir.h"
#include "io/recipe.h"
#include "model/model.h"
#include "model/plan_facts.h"

namespace vgen {

// recipe.model's `vae` component on the ranks that decode (the VAE group; on the CPU the replica
// leader), through its own weight stream; null elsewhere. Collective over each node like the Wan
// load (every rank calls it). kModel when z_dim is not `latent_channels`. `encodes`: the encoder too.
std::unique_ptr<VideoAutoencoder> load_wan_vae_autoencoder(const Recipe& recipe, Mesh& mesh,
                                                           int64_t latent_channels, bool encodes);

// The same VAE priced for `vgen plan` (model/plan_facts.h) as the Wan family prices its own: the
// decoder's work, the scale factors and (with `headers`) its bytes, the encoder's FLOPs. The decoder's
// z_dim is m.out_channels (set it first).
void plan_lent_wan_vae(const DiffusersDir& dir, PlanModel& m, bool headers);

}  // namespace vgen
