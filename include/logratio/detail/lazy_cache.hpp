#pragma once
// A value computed on first use and kept until invalidated, for const
// queries that share an expensive derived view (the KLL sorted view).
// Building is done under a mutex with a double-checked flag, so several
// threads may query one object at once; copies carry the value, not the lock.
// Invalidation is a non-const operation of the owner (no concurrent query).
#include <atomic>
#include <mutex>
#include <utility>

#include "../core/version.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace detail {

template <class V>
class lazy_cache {
public:
    lazy_cache() = default;
    lazy_cache(const lazy_cache& o) : value_(o.value_), valid_(o.valid_.load(std::memory_order_acquire)) {}
    lazy_cache(lazy_cache&& o) noexcept : value_(std::move(o.value_)), valid_(o.valid_.load(std::memory_order_acquire)) {}
    lazy_cache& operator=(const lazy_cache& o) {
        if (this != &o) {
            value_ = o.value_;
            valid_.store(o.valid_.load(std::memory_order_acquire), std::memory_order_release);
        }
        return *this;
    }
    lazy_cache& operator=(lazy_cache&& o) noexcept {
        value_ = std::move(o.value_);
        valid_.store(o.valid_.load(std::memory_order_acquire), std::memory_order_release);
        return *this;
    }

    /// Drops the value; its storage is kept for the next build.
    void invalidate() noexcept { valid_.store(false, std::memory_order_relaxed); }

    /// The value, built by `build(V&)` if it is not valid.
    template <class Build>
    const V& get(Build&& build) const {
        if (!valid_.load(std::memory_order_acquire)) {
            std::lock_guard<std::mutex> lock(mutex_);
            if (!valid_.load(std::memory_order_relaxed)) {
                build(value_);
                valid_.store(true, std::memory_order_release);
            }
        }
        return value_;
    }

private:
    mutable V value_{};
    mutable std::atomic<bool> valid_{false};
    mutable std::mutex mutex_;
};

}  // namespace detail
LOGRATIO_NAMESPACE_END
