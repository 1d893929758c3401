namespace Jackdaw.Server.Tests.Infrastructure;

/// <summary>A fresh folder under the temp path, deleted on dispose.</summary>
public sealed class TempFolder : IDisposable
{
    public TempFolder(string prefix = "jackdaw-test")
    {
        Path = System.IO.Path.Combine(System.IO.Path.GetTempPath(), $"{prefix}-{Guid.NewGuid():N}");
        Directory.CreateDirectory(Path);
    }

    public string Path { get; }

    public void Dispose()
    {
        try
        {
            Directory.Delete(Path, recursive: true);
        }
        catch (DirectoryNotFoundException)
        {
        }
    }
}
