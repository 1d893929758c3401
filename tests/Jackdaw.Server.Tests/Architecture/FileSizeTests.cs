using Jackdaw.Server.Tests.Readme;

namespace Jackdaw.Server.Tests.Architecture;

/// <summary>
/// No source file of the server over <see cref="MaxLines"/> lines, unless its first lines say why it
/// must be one file (a comment with <see cref="Marker"/>): a file that grows past that has usually
/// gathered several concerns, and a newcomer looking for one of them guesses wrong.
/// </summary>
public sealed class FileSizeTests
{
    private const int MaxLines = 600;
    private const string Marker = "One file because";
    private const int HeaderLines = 20;

    [Fact]
    public void NoServerFileIsOverSixHundredLinesWithoutSayingWhy()
    {
        var server = Path.Combine(ReadmeDocument.RepositoryRoot, "server");
        var separator = Path.DirectorySeparatorChar;
        var offenders = Directory.EnumerateFiles(server, "*.cs", SearchOption.AllDirectories)
            .Where(f => !f.Contains($"{separator}bin{separator}", StringComparison.Ordinal) && !f.Contains($"{separator}obj{separator}", StringComparison.Ordinal))
            .Select(f => (Path: Path.GetRelativePath(ReadmeDocument.RepositoryRoot, f), Lines: File.ReadAllLines(f)))
            .Where(f => f.Lines.Length > MaxLines && !f.Lines.Take(HeaderLines).Any(l => l.Contains(Marker, StringComparison.Ordinal)))
            .Select(f => $"{f.Path} ({f.Lines.Length} lines)")
            .ToList();
        Assert.True(offenders.Count == 0, $"Split these, or say in their first {HeaderLines} lines why each must be one file (\"{Marker} ...\"): {string.Join(", ", offenders)}");
    }

    [Fact]
    public void TheCheckReadsTheServersFiles()
    {
        var server = Path.Combine(ReadmeDocument.RepositoryRoot, "server");
        Assert.True(Directory.EnumerateFiles(server, "*.cs", SearchOption.AllDirectories).Count() > 100);
    }
}
