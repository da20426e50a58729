// Per-message costs of the real MPI on this machine, for the simulated
// platforms' parameters (docs/scale/platforms.md says which number went where).
// Two ranks; rank 0 sends, rank 1 receives. Per size:
//   one-way  half the round trip of a ping-pong (minimum over rounds)
//   send     CPU time of MPI_Isend while the receive is already posted,
//            per message, over a burst (the sender's overhead, LogP's o_s)
//   recv     CPU time of MPI_Recv of a message that has already arrived,
//            per message, over a burst (the receiver's overhead, o_r)
//   stream   bytes per second of a burst of messages (one sender)
// Prints CSV: bytes,one_way_s,send_s,recv_s,stream_Bps. Native MPI only (not
// linked to shim). Each figure is the least disturbed of its rounds (the
// fastest): other work on the machine only ever adds time to a round, and
// the model is of a machine running nothing else.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr int kRounds = 15;
constexpr int kBurst = 64;

double fastest(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }
double highest(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }

double one_way(int rank, std::vector<char>& buf, int bytes) {
  double best = 1e9;
  for (int round = 0; round < kRounds; ++round) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < 10; ++i) {
      if (rank == 0) {
        MPI_Send(buf.data(), bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buf.data(), bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buf.data(), bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf.data(), bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
      }
    }
    best = std::min(best, (MPI_Wtime() - t0) / 20);
  }
  return best;
}

// Sender overhead: the receiver posts all receives, then both meet; the
// sender times its posting loop only.
double send_overhead(int rank, std::vector<char>& buf, int bytes) {
  std::vector<double> per_message;
  std::vector<MPI_Request> requests(kBurst);
  for (int round = 0; round < kRounds; ++round) {
    if (rank == 1) {
      for (int i = 0; i < kBurst; ++i) {
        MPI_Irecv(buf.data() + static_cast<std::size_t>(i) * bytes, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
                  &requests[i]);
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      const double t0 = MPI_Wtime();
      for (int i = 0; i < kBurst; ++i) {
        MPI_Isend(buf.data() + static_cast<std::size_t>(i) * bytes, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD,
                  &requests[i]);
      }
      per_message.push_back((MPI_Wtime() - t0) / kBurst);
    }
    MPI_Waitall(kBurst, requests.data(), MPI_STATUSES_IGNORE);
  }
  return rank == 0 ? fastest(per_message) : 0;
}

// Receiver overhead: the sender's burst has arrived (it waited for its sends
// and a barrier) before the receiver times its receives.
double recv_overhead(int rank, std::vector<char>& buf, int bytes) {
  std::vector<double> per_message;
  std::vector<MPI_Request> requests(kBurst);
  for (int round = 0; round < kRounds; ++round) {
    if (rank == 0) {
      for (int i = 0; i < kBurst; ++i) {
        MPI_Isend(buf.data() + static_cast<std::size_t>(i) * bytes, bytes, MPI_BYTE, 1, 2, MPI_COMM_WORLD,
                  &requests[i]);
      }
      // Eager messages complete locally; larger ones need the receiver.
      MPI_Barrier(MPI_COMM_WORLD);
      MPI_Waitall(kBurst, requests.data(), MPI_STATUSES_IGNORE);
    } else {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      for (int i = 0; i < kBurst; ++i) {
        MPI_Recv(buf.data() + static_cast<std::size_t>(i) * bytes, bytes, MPI_BYTE, 0, 2, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
      }
      per_message.push_back((MPI_Wtime() - t0) / kBurst);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  return rank == 1 ? fastest(per_message) : 0;
}

double stream(int rank, std::vector<char>& buf, int bytes) {
  std::vector<double> rate;
  std::vector<MPI_Request> requests(kBurst);
  for (int round = 0; round < kRounds; ++round) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < kBurst; ++i) {
      char* at = buf.data() + static_cast<std::size_t>(i) * bytes;
      if (rank == 0) {
        MPI_Isend(at, bytes, MPI_BYTE, 1, 3, MPI_COMM_WORLD, &requests[i]);
      } else {
        MPI_Irecv(at, bytes, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &requests[i]);
      }
    }
    MPI_Waitall(kBurst, requests.data(), MPI_STATUSES_IGNORE);
    char done = 0;
    if (rank == 1) MPI_Send(&done, 1, MPI_BYTE, 0, 4, MPI_COMM_WORLD);
    if (rank == 0) {
      MPI_Recv(&done, 1, MPI_BYTE, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      rate.push_back(static_cast<double>(bytes) * kBurst / (MPI_Wtime() - t0));
    }
  }
  return rank == 0 ? highest(rate) : 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "message_costs: run with 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int max_bytes = argc > 1 ? std::atoi(argv[1]) : 1 << 20;
  std::vector<char> buf(static_cast<std::size_t>(max_bytes) * kBurst, 1);
  if (rank == 0) std::printf("bytes,one_way_s,send_s,recv_s,stream_Bps\n");
  for (int bytes = 8; bytes <= max_bytes; bytes *= 8) {
    const double ow = one_way(rank, buf, bytes);
    double send = send_overhead(rank, buf, bytes);
    double recv = recv_overhead(rank, buf, bytes);
    const double bw = stream(rank, buf, bytes);
    // The receiver's figure to rank 0, which prints.
    if (rank == 1) MPI_Send(&recv, 1, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD);
    if (rank == 0) {
      MPI_Recv(&recv, 1, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      std::printf("%d,%.3e,%.3e,%.3e,%.4e\n", bytes, ow, send, recv, bw);
      std::fflush(stdout);
    }
  }
  MPI_Finalize();
  return 0;
}
