/** The seed book's TODO protocol (seeds/001, section 1.3.3). Test-only. */
public interface Frontier {
    public CrawlUrl getNext() throws Exception;

    public boolean putUrl(CrawlUrl url) throws Exception;
}
