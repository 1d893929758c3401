using System.Diagnostics;
using Jackdaw.Server.Documents;

namespace Jackdaw.Server.Tests.Documents;

/// <summary>RavenDB's <c>matches</c>/<c>exclude</c> wildcards: alternatives, <c>*</c> and <c>?</c>, any casing, the whole text.</summary>
public sealed class IdPatternTests
{
    [Theory]
    [InlineData("1*", "10", true)]
    [InlineData("1*", "21", false)]
    [InlineData("*1", "21", true)]
    [InlineData("?", "7", true)]
    [InlineData("?", "", false)]
    [InlineData("?", "77", false)]
    [InlineData("a*b?c", "AxxxBzC", true)]
    [InlineData("a*b?c", "abc", false)]
    [InlineData("*", "", true)]
    [InlineData("**x", "x", true)]
    [InlineData("x|y|z*", "zed", true)]
    [InlineData("x||y", "y", true)]
    [InlineData("Ü*", "über", true)]
    [InlineData("*-a", "12-a-b", false)]
    [InlineData("*-a*", "12-a-b", true)]
    public void APatternMatchesTheWholeTextIgnoringCase(string pattern, string text, bool matches) =>
        Assert.Equal(matches, IdPattern.Parse(pattern)!.Matches(text));

    [Theory]
    [InlineData(null)]
    [InlineData("")]
    [InlineData("|")]
    public void AnEmptyPatternIsNoPattern(string? pattern) => Assert.Null(IdPattern.Parse(pattern));

    [Fact]
    public void ManyStarsDoNotBacktrackForever()
    {
        var pattern = IdPattern.Parse(string.Concat(Enumerable.Repeat("*a", 30)) + "*b")!;
        var text = new string('a', 5000);
        var watch = Stopwatch.StartNew();
        Assert.False(pattern.Matches(text));
        Assert.True(watch.Elapsed < TimeSpan.FromSeconds(5), watch.Elapsed.ToString());
    }
}
