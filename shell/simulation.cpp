#include "shell/simulation.hpp"

#include "shell/detail/clock_element.hpp"

namespace antler {

namespace {
NodeLayout layout_of(const comm::Comm& c) {
  return c.valid() ? NodeLayout{c.rank(), c.size()} : NodeLayout{};
}
}  // namespace

Simulation::Simulation(comm::Comm comm)
    : ReduceContext(layout_of(comm)), clock_(*this), shell_(*this) {
  if (comm.valid()) attach(comm);
  if (!blockRounds_) blockRounds_ = std::make_unique<comm::BlockRounds>(comm::Comm());
  // /clock exists as soon as the simulation does, made at the same point on every node.
  make_clock_element(*this);
}

Simulation::~Simulation() = default;

void Simulation::attach(const comm::Comm& comm) {
  shell_.setComm(comm.dup());
  post().setComm(comm.dup());
  reduces().setComm(comm.dup());
  blockRounds_ = std::make_unique<comm::BlockRounds>(comm);
  clock_.commsChanged();
}

void Simulation::detach() {
  if (layout().numNodes > 1) {
    // The other nodes' entries are gone with them: what is left here is no model.
    msgs().clear();
    elements().clear();
    clock_.clear();
    post().clear();
    reduces().clear();
  }
  setLayout(NodeLayout{});
  shell_.setComm({});
  post().setComm({});
  reduces().setComm({});
  blockRounds_ = std::make_unique<comm::BlockRounds>(comm::Comm());
  clock_.commsChanged();
}

}  // namespace antler
