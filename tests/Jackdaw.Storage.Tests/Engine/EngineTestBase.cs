using System.Text;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Storage.Tests.Engine;

/// <summary>Owns a temp folder per test and opens environments in it.</summary>
public abstract class EngineTestBase : IDisposable
{
    private readonly List<StorageEnvironment> _opened = [];

    protected EngineTestBase()
    {
        Folder = Path.Combine(Path.GetTempPath(), "jackdaw-engine-tests", Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(Folder);
    }

    protected string Folder { get; }

    protected StorageEnvironmentOptions Options(string? path = null) => new()
    {
        Path = path ?? Folder,
        FlushInterval = TimeSpan.FromMilliseconds(200),
    };

    protected StorageEnvironment Open(StorageEnvironmentOptions? options = null)
    {
        var env = StorageEnvironment.Open(options ?? Options());
        _opened.Add(env);
        return env;
    }

    protected StorageEnvironment Reopen(StorageEnvironment env)
    {
        env.Dispose();
        _opened.Remove(env);
        return Open();
    }

    protected static byte[] Bytes(string s) => Encoding.UTF8.GetBytes(s);

    protected static string Text(ReadOnlySpan<byte> b) => Encoding.UTF8.GetString(b);

    public virtual void Dispose()
    {
        foreach (var env in _opened)
        {
            env.Dispose();
        }

        try
        {
            Directory.Delete(Folder, recursive: true);
        }
        catch (IOException)
        {
        }

        GC.SuppressFinalize(this);
    }
}
