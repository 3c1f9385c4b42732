#include "protobuf_wire.hpp"

#include <logratio/core/error.hpp>

namespace logratio_cli::protobuf {

void fail(const origin& o, std::size_t offset, const char* what) {
    throw logratio::format_error(logratio::detail::concat(o.source ? *o.source : std::string("<bytes>"),
                                                          ": byte ", offset, ": protobuf: ", what));
}

}  // namespace logratio_cli::protobuf
