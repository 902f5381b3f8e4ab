// Collects the per-video reports of every replica on world rank 0.
#pragma once
#include <vector>

#include "dist/communicator.h"
#include "io/report.h"

namespace vgen {

// Collective over `world`; returns every rank's reports on every rank (in rank order).
std::vector<VideoReport> gather_video_reports(Communicator& world, const std::vector<VideoReport>& mine);

}  // namespace vgen
