using System.Buffers.Binary;
using Jackdaw.Storage.Engine;
using Microsoft.Data.Sqlite;

namespace Jackdaw.Benchmarks.Engine;

/// <summary>The two stores the engine benchmarks compare, each over its own temp folder.</summary>
internal static class EngineStores
{
    public const int ValueSize = 1024;

    public static string NewFolder(string name)
    {
        var folder = Path.Combine(Path.GetTempPath(), "jackdaw-engine-bench", name + "-" + Guid.NewGuid().ToString("N")[..8]);
        Directory.CreateDirectory(folder);
        return folder;
    }

    public static void DeleteFolder(string? folder)
    {
        if (folder is not null && Directory.Exists(folder))
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    public static StorageEnvironment OpenJackdaw(string folder) => StorageEnvironment.Open(new StorageEnvironmentOptions { Path = folder });

    /// <summary>SQLite as its users would tune it for durability: WAL, synchronous=FULL, an integer primary key (the rowid B-tree).</summary>
    public static SqliteConnection OpenSqlite(string folder)
    {
        var connection = new SqliteConnection($"Data Source={Path.Combine(folder, "bench.db")};Pooling=False");
        connection.Open();
        Execute(connection, "PRAGMA journal_mode=WAL;");
        Execute(connection, "PRAGMA synchronous=FULL;");
        Execute(connection, "CREATE TABLE IF NOT EXISTS kv (k INTEGER PRIMARY KEY, v BLOB NOT NULL);");
        return connection;
    }

    public static void Execute(SqliteConnection connection, string sql)
    {
        using var command = connection.CreateCommand();
        command.CommandText = sql;
        command.ExecuteNonQuery();
    }

    /// <summary>The engine's key for <paramref name="k"/>: 8 bytes big-endian, so byte order is numeric order.</summary>
    public static void Key(Span<byte> key, long k) => BinaryPrimitives.WriteInt64BigEndian(key, k);

    public static byte[] Value(int seed)
    {
        var value = new byte[ValueSize];
        new Random(seed).NextBytes(value);
        return value;
    }

    public static long[] RandomKeys(int count, int seed)
    {
        var random = new Random(seed);
        var keys = new long[count];
        for (var i = 0; i < count; i++)
        {
            keys[i] = random.NextInt64(long.MaxValue);
        }

        return keys;
    }

    public static long FolderSize(string folder) => new DirectoryInfo(folder).EnumerateFiles().Sum(f => f.Length);
}

/// <summary>Prepared insert into the SQLite table, reused across rows.</summary>
internal sealed class SqliteInserter : IDisposable
{
    private readonly SqliteCommand _command;
    private readonly SqliteParameter _key;
    private readonly SqliteParameter _value;

    public SqliteInserter(SqliteConnection connection)
    {
        _command = connection.CreateCommand();
        _command.CommandText = "INSERT OR REPLACE INTO kv (k, v) VALUES ($k, $v);";
        _key = _command.Parameters.Add("$k", SqliteType.Integer);
        _value = _command.Parameters.Add("$v", SqliteType.Blob);
        _command.Prepare();
    }

    public void Insert(SqliteTransaction tx, long key, byte[] value)
    {
        _command.Transaction = tx;
        _key.Value = key;
        _value.Value = value;
        _command.ExecuteNonQuery();
    }

    public void Dispose() => _command.Dispose();
}
