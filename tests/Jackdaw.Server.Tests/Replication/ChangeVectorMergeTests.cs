using Jackdaw.Server.Documents;

namespace Jackdaw.Server.Tests.Replication;

public class ChangeVectorMergeTests
{
    private const string IdA = "AAAAAAAAAAAAAAAAAAAAAA";
    private const string IdB = "BBBBBBBBBBBBBBBBBBBBBB";
    private const string IdC = "CCCCCCCCCCCCCCCCCCCCCC";

    [Fact]
    public void SeveralEntriesParseInRavenDbsForm()
    {
        var entries = ChangeVectors.Parse($"A:120-{IdA}, B:45-{IdB}");
        Assert.Equal([new ChangeVectorEntry("A", 120, IdA), new ChangeVectorEntry("B", 45, IdB)], entries);
    }

    [Fact]
    public void DatabaseIdsWithDashesParse()
    {
        var entries = ChangeVectors.Parse("A:7-ab-cd_ef, B:8--xyz");
        Assert.Equal([new ChangeVectorEntry("A", 7, "ab-cd_ef"), new ChangeVectorEntry("B", 8, "-xyz")], entries);
    }

    [Theory]
    [InlineData("A:")]
    [InlineData("A:x-abc")]
    [InlineData("A:5-")]
    [InlineData(":5-abc")]
    [InlineData("A:5-abc, nonsense")]
    public void MalformedEntriesAreRefused(string text) => Assert.Throws<FormatException>(() => ChangeVectors.Parse(text));

    [Theory]
    [InlineData("A:5-a", "A:5-a", ChangeVectorOrder.Equal)]
    [InlineData("A:6-a", "A:5-a", ChangeVectorOrder.Newer)]
    [InlineData("A:5-a", "A:6-a", ChangeVectorOrder.Older)]
    [InlineData("A:5-a, B:1-b", "A:5-a", ChangeVectorOrder.Newer)]
    [InlineData("A:5-a", "A:5-a, B:1-b", ChangeVectorOrder.Older)]
    [InlineData("A:6-a", "A:5-a, B:1-b", ChangeVectorOrder.Conflict)]
    [InlineData("A:5-a, B:2-b", "B:1-b, A:6-a", ChangeVectorOrder.Conflict)]
    [InlineData("B:1-b, A:5-a", "A:5-a, B:1-b", ChangeVectorOrder.Equal)]
    public void CompareFollowsEveryEntry(string first, string second, ChangeVectorOrder expected) =>
        Assert.Equal(expected, ChangeVectors.Compare(first, second));

    [Fact]
    public void MergeTakesEachDatabasesHigherEtagInOneOrder()
    {
        var merged = ChangeVectors.Merge($"B:45-{IdB}, A:100-{IdA}", $"A:120-{IdA}, C:3-{IdC}");
        Assert.Equal($"A:120-{IdA}, B:45-{IdB}, C:3-{IdC}", merged);
        Assert.Equal(merged, ChangeVectors.Merge($"A:120-{IdA}, C:3-{IdC}", $"B:45-{IdB}, A:100-{IdA}"));
    }

    [Fact]
    public void LocalWriteSetsOnlyItsOwnEntry()
    {
        Assert.Equal($"A:9-{IdA}", ChangeVectors.Update(null, "A", 9, IdA));
        Assert.Equal($"A:9-{IdA}", ChangeVectors.Update($"A:4-{IdA}", "A", 9, IdA));
        Assert.Equal($"A:9-{IdA}, B:45-{IdB}", ChangeVectors.Update($"B:45-{IdB}", "A", 9, IdA));
        Assert.Equal($"A:120-{IdA}, B:46-{IdB}", ChangeVectors.Update($"A:120-{IdA}, B:45-{IdB}", "B", 46, IdB));
    }

    [Fact]
    public void EtagOfFindsTheDatabasesEntry()
    {
        Assert.Equal(45, ChangeVectors.EtagOf($"A:120-{IdA}, B:45-{IdB}", IdB));
        Assert.Equal(0, ChangeVectors.EtagOf($"A:120-{IdA}", IdB));
    }

    [Theory]
    [InlineData("\"A:1-a, B:2-b\"", true)]
    [InlineData("A:1-a, B:2-b", true)]
    [InlineData("\"A:1-a\", \"A:1-a, B:2-b\"", true)]
    [InlineData("W/\"A:1-a, B:2-b\"", true)]
    [InlineData("*", true)]
    [InlineData("\"A:1-a\"", false)]
    [InlineData("\"A:1-a, B:3-b\"", false)]
    public void MatchesReadsAMultiEntryVectorAsOneValue(string header, bool expected) =>
        Assert.Equal(expected, ChangeVectors.Matches(header, "A:1-a, B:2-b"));
}
