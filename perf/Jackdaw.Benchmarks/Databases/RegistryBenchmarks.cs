using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using Jackdaw.Server.Databases;
using Bcl = System.Collections.Concurrent;

namespace Jackdaw.Benchmarks.Databases;

/// <summary>
/// The database registry that every request reads (<see cref="DatabasesLandlord"/>): lookups of
/// database names in <c>NonBlocking.ConcurrentDictionary</c> against the BCL's
/// <see cref="Bcl.ConcurrentDictionary{TKey,TValue}"/> (the baseline), both keyed by
/// <see cref="DatabaseNameKey"/> with <see cref="DatabaseNameKey.Comparer"/>, 50 databases.
/// Lookup keys are slices of request paths in mixed casing, as the server makes them from a route
/// capture.
/// <para>
/// Contended rows (issue 16): 64 readers each do <see cref="LookupsPerReader"/> lookups while one
/// writer adds and removes a 51st database in a loop until the readers finish. The readers are 64
/// threads started once per benchmark process and parked on a <see cref="Barrier"/>: each
/// invocation releases them together and waits for all of them, so thread creation (tens of µs a
/// thread) is not in the per-lookup time. The writer is a new thread each invocation; it is running
/// before the readers are released, and it is stopped and joined before the invocation returns.
/// Allocations are counted on every thread, so the writer's share (the BCL allocates a node per add)
/// shows in "Allocated" divided over the lookups.
/// </para>
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByCategory)]
[CategoriesColumn]
public class RegistryBenchmarks
{
    private const int Databases = 50;
    private const int Readers = 64;
    private const int LookupsPerReader = 16_384;
    private const int SingleThreadLookups = 16_384;
    private const int KeyCount = 1024; // a power of two
    private const string PathPrefix = "/databases/";

    private static readonly string[] Suffixes = ["/docs", "/queries", "/stats", "/indexes/Orders/ByCompany", "/subscriptions/connect", "/bulk_docs"];

    private static readonly object Value = new();

    private NonBlocking.ConcurrentDictionary<DatabaseNameKey, object> _nonBlocking = null!;
    private Bcl.ConcurrentDictionary<DatabaseNameKey, object> _bcl = null!;
    private DatabaseNameKey[] _keys = null!;
    private readonly DatabaseNameKey _extra = new("Tenant-Extra-51");

    // The contended rows: parked readers and their per-invocation state.
    private Thread[] _readers = [];
    private Barrier _barrier = null!;
    private volatile bool _readBcl;
    private volatile bool _exit;
    private volatile bool _stopWriter;
    private readonly long[] _found = new long[Readers * 8]; // one slot per reader, a cache line apart
    private ManualResetEventSlim _writerRunning = null!;

    public static IEnumerable<string> Names()
    {
        string[] real = ["Northwind", "Orders", "Users", "Inventory", "Billing", "Analytics", "Audit", "Catalog", "Shipping", "Sessions"];
        var random = new Random(16);
        var names = new List<string>(real);
        while (names.Count < Databases)
        {
            names.Add($"Tenant-{random.Next(100_000):D5}-{(char)('a' + random.Next(26))}{(char)('a' + random.Next(26))}");
        }
        return names;
    }

    [GlobalSetup(Targets = [nameof(SingleThreadBcl), nameof(SingleThreadNonBlocking)])]
    public void Setup()
    {
        var names = Names().ToArray();
        if (names.Distinct(StringComparer.OrdinalIgnoreCase).Count() != Databases)
        {
            throw new InvalidOperationException("Duplicate database names.");
        }
        _nonBlocking = new NonBlocking.ConcurrentDictionary<DatabaseNameKey, object>(DatabaseNameKey.Comparer);
        _bcl = new Bcl.ConcurrentDictionary<DatabaseNameKey, object>(DatabaseNameKey.Comparer);
        foreach (var name in names)
        {
            _nonBlocking.TryAdd(new DatabaseNameKey(name), Value);
            _bcl.TryAdd(new DatabaseNameKey(name), Value);
        }

        // Each key is a slice of its own path string, in a random casing: "/databases/nORthWind/docs".AsMemory(11, 9).
        var random = new Random(1616);
        _keys = new DatabaseNameKey[KeyCount];
        for (var i = 0; i < KeyCount; i++)
        {
            var name = names[random.Next(names.Length)];
            var cased = string.Create(name.Length, (name, random), static (span, state) =>
            {
                for (var c = 0; c < span.Length; c++)
                {
                    span[c] = state.random.Next(2) == 0 ? char.ToLowerInvariant(state.name[c]) : char.ToUpperInvariant(state.name[c]);
                }
            });
            var path = PathPrefix + cased + Suffixes[random.Next(Suffixes.Length)];
            _keys[i] = new DatabaseNameKey(path.AsMemory(PathPrefix.Length, name.Length));
        }

        if (Lookups(new NonBlockingRegistry(_nonBlocking), 0, KeyCount) != KeyCount || Lookups(new BclRegistry(_bcl), 0, KeyCount) != KeyCount)
        {
            throw new InvalidOperationException("A lookup key was not found.");
        }
    }

    [GlobalSetup(Targets = [nameof(ContendedBcl), nameof(ContendedNonBlocking)])]
    public void SetupContended()
    {
        Setup();
        _writerRunning = new ManualResetEventSlim(false);
        _barrier = new Barrier(Readers + 1);
        _readers = new Thread[Readers];
        for (var r = 0; r < Readers; r++)
        {
            var reader = r;
            _readers[r] = new Thread(() => ReaderLoop(reader)) { IsBackground = true, Name = $"registry-reader-{r}" };
            _readers[r].Start();
        }
    }

    [GlobalCleanup(Targets = [nameof(ContendedBcl), nameof(ContendedNonBlocking)])]
    public void CleanupContended()
    {
        _exit = true;
        _barrier.SignalAndWait(); // releases the parked readers, which see _exit and return
        foreach (var reader in _readers)
        {
            reader.Join();
        }
        _barrier.Dispose();
        _writerRunning.Dispose();
    }

    [BenchmarkCategory("SingleThread")]
    [Benchmark(Baseline = true, OperationsPerInvoke = SingleThreadLookups)]
    public long SingleThreadBcl() => Lookups(new BclRegistry(_bcl), 0, SingleThreadLookups);

    [BenchmarkCategory("SingleThread")]
    [Benchmark(OperationsPerInvoke = SingleThreadLookups)]
    public long SingleThreadNonBlocking() => Lookups(new NonBlockingRegistry(_nonBlocking), 0, SingleThreadLookups);

    [BenchmarkCategory("64 readers + writer")]
    [Benchmark(Baseline = true, OperationsPerInvoke = Readers * LookupsPerReader)]
    public long ContendedBcl()
    {
        _readBcl = true;
        return Contended(new BclRegistry(_bcl));
    }

    [BenchmarkCategory("64 readers + writer")]
    [Benchmark(OperationsPerInvoke = Readers * LookupsPerReader)]
    public long ContendedNonBlocking()
    {
        _readBcl = false;
        return Contended(new NonBlockingRegistry(_nonBlocking));
    }

    private long Contended<TRegistry>(TRegistry registry)
        where TRegistry : struct, IRegistry
    {
        _stopWriter = false;
        _writerRunning.Reset();
        var writer = new Thread(() => WriterLoop(registry)) { IsBackground = true };
        writer.Start();
        try
        {
            _writerRunning.Wait();
            _barrier.SignalAndWait(); // start: all 64 readers are released together
            _barrier.SignalAndWait(); // end: every reader has done its lookups
        }
        finally
        {
            _stopWriter = true;
            writer.Join();
        }

        long found = 0;
        for (var r = 0; r < Readers; r++)
        {
            found += _found[r * 8];
        }
        if (found != (long)Readers * LookupsPerReader)
        {
            throw new InvalidOperationException($"Readers found {found} of {Readers * LookupsPerReader}.");
        }
        return found;
    }

    private void ReaderLoop(int reader)
    {
        var start = reader * 61; // readers walk the keys from different places
        while (true)
        {
            _barrier.SignalAndWait();
            if (_exit)
            {
                return;
            }
            _found[reader * 8] = _readBcl
                ? Lookups(new BclRegistry(_bcl), start, LookupsPerReader)
                : Lookups(new NonBlockingRegistry(_nonBlocking), start, LookupsPerReader);
            _barrier.SignalAndWait();
        }
    }

    private void WriterLoop<TRegistry>(TRegistry registry)
        where TRegistry : struct, IRegistry
    {
        var extra = _extra;
        var signalled = false;
        while (!_stopWriter)
        {
            if (!registry.TryAdd(extra, Value) || !registry.TryRemove(extra))
            {
                throw new InvalidOperationException("The writer's database was already there.");
            }
            if (!signalled)
            {
                _writerRunning.Set();
                signalled = true;
            }
        }
    }

    private long Lookups<TRegistry>(TRegistry registry, int start, int count)
        where TRegistry : struct, IRegistry
    {
        var keys = _keys;
        long found = 0;
        for (var i = 0; i < count; i++)
        {
            if (registry.TryGetValue(keys[(start + i) & (KeyCount - 1)], out _))
            {
                found++;
            }
        }
        return found;
    }

    // Struct wrappers so one generic loop serves both dictionaries with direct (not interface) calls.
    internal interface IRegistry
    {
        bool TryGetValue(DatabaseNameKey key, out object? value);
        bool TryAdd(DatabaseNameKey key, object value);
        bool TryRemove(DatabaseNameKey key);
    }

    private readonly struct NonBlockingRegistry(NonBlocking.ConcurrentDictionary<DatabaseNameKey, object> map) : IRegistry
    {
        public bool TryGetValue(DatabaseNameKey key, out object? value) => map.TryGetValue(key, out value);
        public bool TryAdd(DatabaseNameKey key, object value) => map.TryAdd(key, value);
        public bool TryRemove(DatabaseNameKey key) => map.TryRemove(key, out _);
    }

    private readonly struct BclRegistry(Bcl.ConcurrentDictionary<DatabaseNameKey, object> map) : IRegistry
    {
        public bool TryGetValue(DatabaseNameKey key, out object? value) => map.TryGetValue(key, out value);
        public bool TryAdd(DatabaseNameKey key, object value) => map.TryAdd(key, value);
        public bool TryRemove(DatabaseNameKey key) => map.TryRemove(key, out _);
    }
}
