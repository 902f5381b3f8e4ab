// Loading a Wan checkpoint on one rank of a mesh, in named phases (docs/architecture.md "Loading"):
//   placement  who reads what: one weight stream registers every component in the same order on
//              every rank of a node; each rank requests what it needs (dist/weight_stream.h)
//   open       configs, the expert schedule, the VAE's placement (its warm-up starts here)
//   stream     the bytes read once per node, straight to this rank's GPU or into host memory
//   finalize   LoRA merges → fp8 quantisation → DWDP (host), on the final weights
// The device decides where the bytes land, not which code computes with them.
#include <future>
#include <memory>
#include <optional>

#include "dist/node_comm.h"
#include "model/latents.h"
#include "model/wan/dit/fp8_options.h"
#include "model/wan/dit/lora.h"
#include "model/wan/dit/transformer.h"
#include "model/wan/family.h"
#include "model/wan/image_condition.h"
#include "model/wan/text/text_encoder.h"
#include "model/wan/vae/autoencoder.h"

namespace vgen {
namespace {

// One load: the checkpoint's stores registered with one stream, and what it has built so far.
struct WanLoad {
  WanLoad(const Recipe& r, Mesh& m) : recipe(r), mesh(m), dir(r.model) {}
  const Recipe& recipe;
  Mesh& mesh;
  DiffusersDir dir;
  bool leader = false, cuda = false, two = false;
  std::unique_ptr<WeightStream> stream;
  WeightStore te_store, tr_store, tr2_store, vae_store, img_store;
  int c_te = -1, c_tr = -1, c_tr2 = -1, c_vae = -1, c_img = -1;  // c_img: the CLIP image encoder (I2V)
  WanVaeConfig vcfg;
  TextEncoderOptions topt;
  std::unique_ptr<TextEncoder> text;
  std::unique_ptr<WanTransformer> experts[2];
  WanVideoAutoencoder* autoencoder = nullptr;  // owned by `out`
  LoadedModel out;
};

// Placement: every rank of a node registers all components in the same order and requests what
// it needs; the node reads each byte once.
void place(WanLoad& l) {
  const WeightStreamOptions sopt = WeightStreamOptions::from_env();
  std::shared_ptr<Communicator> node_host = sopt.share ? node_host_communicator() : nullptr;
  std::shared_ptr<Communicator> node_dev = l.cuda && node_host ? node_device_communicator(node_host) : nullptr;
  l.stream = std::make_unique<WeightStream>(node_host, node_dev, sopt);
  l.te_store = WeightStore::open(l.dir.component_path("text_encoder"));
  l.tr_store = WeightStore::open(l.dir.component_path("transformer"));
  if (l.two) l.tr2_store = WeightStore::open(l.dir.component_path("transformer_2"));
  l.vae_store = WeightStore::open(l.dir.component_path("vae"));
  l.c_te = l.stream->add_component("text_encoder", l.te_store);
  l.c_tr = l.stream->add_component("transformer", l.tr_store);
  if (l.two) l.c_tr2 = l.stream->add_component("transformer_2", l.tr2_store);
  l.c_vae = l.stream->add_component("vae", l.vae_store);
  if (wan_takes_image_tokens(l.dir)) {  // the replica leaders' CLIP encoder, streamed like the rest
    l.img_store = WeightStore::open(l.dir.component_path("image_encoder"));
    l.c_img = l.stream->add_component("image_encoder", l.img_store);
  }
}

// The recipe's generation.boundary_ratio, else model_index.json's (Wan 2.2's expert switch).
std::optional<double> boundary_ratio(const Recipe& recipe, const DiffusersDir& dir, bool two) {
  std::optional<double> b = recipe.generation.boundary_ratio;
  const Json& idx = dir.model_index();
  if (!b && idx.contains("boundary_ratio") && !idx["boundary_ratio"].is_null()) {
    const std::string src = dir.root() + "/model_index.json";
    const double v = json_get_or<double>(idx, "boundary_ratio", 0.0, src);  // kModel if not a number
    VGEN_CHECK(v >= 0.0 && v <= 1.0, ExitCode::kModel, "{}: boundary_ratio {} is outside [0, 1]", src, v);
    b = v;
  }
  if (b)
    VGEN_CHECK(two, ExitCode::kModel, "boundary_ratio {} is set but {} has no transformer_2", *b, dir.root());
  return b;
}

// Open: the expert schedule, the VAE config and the autoencoder's placement on the ranks that
// decode (the VAE group; on the CPU the replica leader too). A device decoder used alone starts
// its warm-up here, beside the stream.
void open(WanLoad& l) {
  l.out.schedule.boundary_ratio = boundary_ratio(l.recipe, l.dir, l.two);
  l.vcfg = parse_wan_vae_config(l.dir.component_config("vae"), l.dir.component_path("vae") + "/config.json");
  l.topt.weights = &l.te_store;
  // Parsed on every rank, so a bad vae/config.json fails every rank alike.
  VGEN_CHECK(l.vcfg.z_dim == l.out.traits.latent_channels, ExitCode::kModel,
             "{}/vae/config.json: z_dim {} but the transformer's latents have {} channels", l.dir.root(),
             l.vcfg.z_dim, l.out.traits.latent_channels);
  const LatentStats stats{l.vcfg.latents_mean, l.vcfg.latents_std};
  const bool decodes = l.mesh.in_vae_group() || (!l.cuda && l.leader);
  if (!decodes) return;
  WanAutoencoderPlacement p;
  p.mesh = l.mesh;
  p.split = l.recipe.parallel.parallel_vae_split_dim;
  p.cuda = l.cuda;
  p.dtype = l.recipe.compute_dtype();
  p.height = l.recipe.generation.height;
  p.width = l.recipe.generation.width;
  p.num_frames = l.recipe.generation.num_frames;
  p.warm_up = l.cuda && wan_vae_warmup_enabled();
  // What its encoder will see (encodes(l)): TI2V's first frame alone, an I2V condition video whole.
  const ImageConditioning cond = l.out.traits.images.conditioning;
  p.encode_frames = cond == ImageConditioning::kNone       ? 0
                    : cond == ImageConditioning::kOptional ? 1
                                                           : 1 + l.vcfg.scale_factor_temporal;
  auto ae = std::make_unique<WanVideoAutoencoder>(l.vcfg, stats, p);
  ae->start_warm_up();
  l.autoencoder = ae.get();
  l.out.autoencoder = std::move(ae);
}

// The ranks that decode an image-conditioned checkpoint's videos also encode its condition images
// (split over the VAE group like the decode).
bool encodes(const WanLoad& l) {
  return l.autoencoder && l.out.traits.images.conditioning != ImageConditioning::kNone;
}

std::unique_ptr<TextEncoder> make_text_encoder(const WanLoad& l) {
  return std::make_unique<TextEncoder>(l.dir.component_path("text_encoder"), l.dir.component_path("tokenizer"),
                                       l.topt);
}

// Stream to the GPU: the weights go straight to this rank's device, requested now and in place
// after the stream's run; the adapters are read and packed beside it and merged after it.
void stream_to_device(WanLoad& l) {
  // Host requests are a run of their own (a run goes either to the host or to the device): the
  // CLIP encoder (to the host, then to the GPU) and, with text.device cpu, the text encoder. Every
  // rank runs it (collective), whether or not it asked for anything.
  if (l.leader && l.c_img >= 0) l.stream->request_host(l.c_img);
  if (!l.recipe.text_on_cuda()) {
    if (l.leader) l.stream->request_host(l.c_te);
  } else {
    l.topt.device = Device::kCUDA;
    l.topt.dtype = l.recipe.compute_dtype();
    l.topt.stream = l.stream.get();
    l.topt.stream_component = l.c_te;
  }
  if (l.c_img >= 0 || !l.recipe.text_on_cuda()) l.stream->run();
  if (l.leader) l.text = make_text_encoder(l);
  if (l.autoencoder) {
    WanVaeOptions vopt;
    vopt.device = Device::kCUDA;
    vopt.dtype = l.recipe.compute_dtype();
    l.autoencoder->set_decoder(std::make_shared<WanVaeDecoder>(l.vcfg, l.vae_store, vopt, l.stream.get(), l.c_vae));
    if (encodes(l))
      l.autoencoder->set_encoder(std::make_shared<WanVaeEncoder>(l.vcfg, l.vae_store, vopt, l.stream.get(), l.c_vae));
  }
  WanDeviceOptions dopt;
  dopt.dtype = l.recipe.compute_dtype();
  dopt.dwdp_size = l.recipe.parallel.dwdp_size;
  dopt.dwdp_transport = l.recipe.parallel.dwdp_transport;
  dopt.world = l.mesh.world;  // DWDP: each expert's IPC handles are exchanged here (collective)
  // With DWDP the expert runs the stream block by block (collective); the text encoder's and the
  // VAE's bytes come with its first block.
  l.experts[0] = WanTransformer::stream_to_device(l.dir.component_path("transformer"), *l.stream, l.c_tr, dopt);
  if (l.two)
    l.experts[1] = WanTransformer::stream_to_device(l.dir.component_path("transformer_2"), *l.stream, l.c_tr2, dopt);
  std::future<LoraSet> lora_1 = read_recipe_lora_async(l.recipe, "transformer", l.experts[0]->config(), true);
  std::future<LoraSet> lora_2 = l.two ? read_recipe_lora_async(l.recipe, "transformer_2", l.experts[1]->config(), true)
                                      : std::future<LoraSet>();
  l.stream->run();
  merge_recipe_lora(l.recipe, *l.experts[0], l.experts[1].get(), lora_1.get(), l.two ? lora_2.get() : LoraSet{});
}

// Stream to the host: the CPU computes on host weights, whole components read into host memory;
// the adapters merge into the host weights (before DWDP).
void stream_to_host(WanLoad& l) {
  if (l.leader) l.stream->request_host(l.c_te);
  if (l.leader && l.c_img >= 0) l.stream->request_host(l.c_img);
  l.stream->request_host(l.c_tr);
  if (l.two) l.stream->request_host(l.c_tr2);
  if (l.autoencoder) l.stream->request_host(l.c_vae);
  l.stream->run();
  if (l.leader) l.text = make_text_encoder(l);
  l.experts[0] = WanTransformer::load(l.dir.component_path("transformer"), l.tr_store);
  if (l.two) l.experts[1] = WanTransformer::load(l.dir.component_path("transformer_2"), l.tr2_store);
  merge_recipe_lora(l.recipe, *l.experts[0], l.experts[1].get());
  if (l.autoencoder) l.autoencoder->set_decoder(std::make_shared<WanVaeDecoder>(l.vcfg, l.vae_store));
  if (l.autoencoder && encodes(l)) l.autoencoder->set_encoder(std::make_shared<WanVaeEncoder>(l.vcfg, l.vae_store));
}

// Finalize: fp8 quantises the final (merged) weights; host DWDP then shares the blocks (collective
// over the world, as on the GPU, whose DWDP placed the blocks while streaming).
void finalize(WanLoad& l) {
  for (auto& e : l.experts)
    if (e) e->set_attention(l.recipe.attention);
  for (auto& e : l.experts)
    if (e && l.recipe.is_quantised()) e->enable_fp8(wan_fp8_options(l.recipe));
  if (!l.cuda && l.recipe.parallel.dwdp_size > 1)
    for (auto& e : l.experts)
      if (e) e->enable_host_dwdp(l.recipe.parallel.dwdp_size, *l.mesh.world);
  l.out.prompt_encoder = std::move(l.text);
  for (auto& e : l.experts)
    if (e) l.out.experts.push_back(std::move(e));
  l.out.load_stats = l.stream->stats();
  l.out.scheduler_config = l.dir.component_config("scheduler");
}

// The image side on the replica leader of an image-conditioned checkpoint: the CLIP image encoder
// (Wan 2.1 I2V / FLF2V; read by the leader alone, moved to its GPU) and the conditioning rules.
void load_image_side(WanLoad& l) {
  if (!l.leader || l.out.traits.images.conditioning == ImageConditioning::kNone) return;
  WanImageConditionConfig c;
  const Json& idx = l.dir.model_index();
  c.expand_timesteps = idx.contains("expand_timesteps") && idx["expand_timesteps"].is_boolean() &&
                       idx["expand_timesteps"].get<bool>();
  c.scale_spatial = l.vcfg.scale_factor_spatial;
  c.scale_temporal = l.vcfg.scale_factor_temporal;
  if (wan_takes_image_tokens(l.dir)) {
    const std::string dir = l.dir.component_path("image_encoder");
    auto clip = std::make_shared<ClipVisionEncoder>(ClipVisionConfig::load(dir), l.img_store, dir);  // streamed
    if (l.cuda) clip->to_device(l.recipe.compute_dtype());
    clip->set_attention(l.recipe.attention);
    c.clip = std::move(clip);
    c.clip_processor = read_clip_image_processor_config(l.dir.component_path("image_processor"));
  }
  l.out.image_conditioner = std::make_unique<WanImageConditioner>(std::move(c));
}

}  // namespace

LoadedModel WanFamily::load(const Recipe& recipe, Mesh& mesh) const {
  WanLoad l(recipe, mesh);
  l.leader = mesh.is_replica_leader();
  l.cuda = recipe.is_cuda();
  l.two = l.dir.has_component("transformer_2");
  l.out.traits = traits(l.dir);
  check_recipe(recipe, l.dir);
  place(l);
  open(l);
  if (l.cuda)
    stream_to_device(l);
  else
    stream_to_host(l);
  finalize(l);
  load_image_side(l);
  return std::move(l.out);
}

}  // namespace vgen
